// ArrowRows.swift — Arrow's columns built on the worker threads (`--jobs`): each worker turns the records it mapped
// into column buffers while other batches map, and the writing thread copies those buffers into its batches instead
// of reading every record's JSON text again. The writer's batches, and so the bytes written, are the same.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The columns of a batch of mapped records, made on a worker (`ArrowRowsPreparer`), and each record's length (the
/// writer cuts its batches by rows and bytes of records).
struct ArrowRows: Sendable {
    /// The rows, lent by the preparer's pool (back to it once the writer has copied them); nil when a record did not
    /// fit the columns (the writer then reads the records' text, and reports what does not fit where it always does).
    private let lent: ColumnBuilderPool.Lent?
    /// Each mapped record's length in bytes (without its newline), in order.
    let lengths: [Int]

    init(lent: ColumnBuilderPool.Lent?, lengths: [Int]) {
        self.lent = lent
        self.lengths = lengths
    }

    var columns: ColumnBuilder? { lent?.columns }
    var count: Int { lengths.count }
}

/// Makes `ArrowRows` of a batch's mapped records (the pipeline's `MappedRecordsPreparer` for Arrow output).
struct ArrowRowsPreparer: MappedRecordsPreparer {
    let schema: ArrowSchema
    let pool: ColumnBuilderPool

    init(schema: ArrowSchema) {
        self.schema = schema
        pool = ColumnBuilderPool(schema: schema)
    }

    func prepare(_ records: UnsafeRawBufferPointer, ends: [Int]) -> (any Sendable)? {
        let columns = pool.take()
        var fits = true
        var lengths: [Int] = []
        lengths.reserveCapacity(ends.count)
        var start = 0
        for end in ends {
            defer { start = end }
            guard end > start else { continue }  // (not mapped)
            lengths.append(end - start)
            guard fits else { continue }
            do throws(ArrowWriteError) {
                try columns.appendRecord(UnsafeRawBufferPointer(rebasing: records[start..<end]))
            } catch {
                fits = false
            }
        }
        return ArrowRows(lent: pool.lend(columns, keep: fits), lengths: lengths)
    }
}

/// The column builders of batches the writer has copied, kept for the batches that come next: a builder made for
/// every batch cost its struct's key table and buffers that grew from 16 values by `realloc`, batch after batch
/// (about 3% of the instructions of `--jobs 2 --to arrow`). At most `limit` are kept, each holding at most
/// `byteLimit` bytes of buffers, so what the pool holds stays bounded whatever the records.
final class ColumnBuilderPool: @unchecked Sendable {
    let schema: ArrowSchema
    let limit: Int
    let byteLimit: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var idle: [ColumnBuilder] = []

    init(schema: ArrowSchema, limit: Int = 8, byteLimit: Int = 1 << 22) {
        self.schema = schema
        self.limit = limit
        self.byteLimit = byteLimit
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Builders kept now (tests).
    var idleCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return idle.count
    }

    /// An empty builder of the schema's columns: one kept, else a new one.
    func take() -> ColumnBuilder {
        pthread_mutex_lock(mutex)
        let kept = idle.popLast()
        pthread_mutex_unlock(mutex)
        return kept ?? ColumnBuilder(.structure(schema.fields))
    }

    /// `columns` lent out until the `Lent` is released (nil: not lent, kept or freed right away).
    func lend(_ columns: ColumnBuilder, keep: Bool) -> Lent? {
        guard keep else {
            give(columns)
            return nil
        }
        return Lent(columns, pool: self)
    }

    /// Takes `columns` back (emptied), unless the pool is full or they hold too much memory.
    func give(_ columns: ColumnBuilder) {
        guard columns.capacityBytes <= byteLimit else { return }
        columns.removeAll()
        pthread_mutex_lock(mutex)
        if idle.count < limit { idle.append(columns) }
        pthread_mutex_unlock(mutex)
    }

    /// A builder on loan: back to its pool when the last copy of the `ArrowRows` holding it goes.
    final class Lent: Sendable {
        let columns: ColumnBuilder
        private let pool: ColumnBuilderPool

        init(_ columns: ColumnBuilder, pool: ColumnBuilderPool) {
            self.columns = columns
            self.pool = pool
        }

        deinit { pool.give(columns) }
    }
}
