// ArrowRows.swift — Arrow's columns built on the worker threads (`--jobs`): each worker turns the records it mapped
// into column buffers while other batches map, and the writing thread copies those buffers into its batches instead
// of reading every record's JSON text again. The writer's batches, and so the bytes written, are the same.

/// The columns of a batch of mapped records, made on a worker (`ArrowRowsPreparer`), and each record's length (the
/// writer cuts its batches by rows and bytes of records).
struct ArrowRows: Sendable {
    /// The rows; nil when a record did not fit the columns (the writer then reads the records' text, and reports
    /// what does not fit where it always does).
    let columns: ColumnBuilder?
    /// Each mapped record's length in bytes (without its newline), in order.
    let lengths: [Int]

    var count: Int { lengths.count }
}

/// Makes `ArrowRows` of a batch's mapped records (the pipeline's `MappedRecordsPreparer` for Arrow output).
struct ArrowRowsPreparer: MappedRecordsPreparer {
    let schema: ArrowSchema

    func prepare(_ records: UnsafeRawBufferPointer, ends: [Int]) -> (any Sendable)? {
        var columns: ColumnBuilder? = ColumnBuilder(.structure(schema.fields))
        var lengths: [Int] = []
        lengths.reserveCapacity(ends.count)
        var start = 0
        for end in ends {
            defer { start = end }
            guard end > start else { continue }  // (not mapped)
            lengths.append(end - start)
            guard columns != nil else { continue }
            do throws(ArrowWriteError) {
                try columns!.appendRecord(UnsafeRawBufferPointer(rebasing: records[start..<end]))
            } catch {
                columns = nil
            }
        }
        return ArrowRows(columns: columns, lengths: lengths)
    }
}
