/// The pipeline's side of `jobs` > 1: records are cut into batches here (see the record callbacks in
/// RecordPipeline.swift), mapped on worker threads (`ParallelMapping`), and handed to the output here in input order
/// through the same `handle` as with one job — so the output sees the same records, reports and stops.
extension PipelineCore {
    /// Hands the batch being cut to the workers (if it holds records), after making room in the window by writing
    /// the oldest batches; then writes whatever batches are mapped, in order.
    mutating func submitBatch() {
        guard let parallel else { return }
        while !isStopped && parallel.inFlight >= parallel.window {
            guard let batch = parallel.nextMapped(wait: true) else { break }
            writeBatch(batch)
        }
        guard !isStopped else {
            parallel.discardAll()
            return
        }
        parallel.submitCurrent(input: inputName)
        while !isStopped, let batch = parallel.nextMapped(wait: false) { writeBatch(batch) }
        if isStopped { parallel.discardAll() }
    }

    /// Submits the batch being cut (a record left unfinished in it is dropped, as the one-job pipeline drops a
    /// record cut by a read error or a signal) and writes every batch in flight: afterwards, everything read so far
    /// has been written, or the run has stopped.
    mutating func finishBatches() {
        guard let parallel else { return }
        batching = false
        submitBatch()
        while !isStopped, let batch = parallel.nextMapped(wait: true) { writeBatch(batch) }
        if isStopped { parallel.discardAll() }
    }

    /// The NDJSON record being cut has grown past `longRecordBytes`: the batches before it are written, then it
    /// streams through this thread's engine as with one job, in constant memory however long it is.
    mutating func streamLongRecord() {
        let start = parallel!.current.takeOpenRecord()
        finishBatches()
        guard !isStopped else {
            skippingRecord = true
            return
        }
        kept.removeAll(keepingCapacity: kept.capacity <= 1 << 20)
        kept.append(contentsOf: start.prefix(keepLimit))
        engine.beginRecord()
        recordInEngine = true
        start.withUnsafeBytes { engine.continueRecord($0) }
    }

    /// Writes a mapped batch: record by record, exactly as with one job (the same output buffer and flushes, the
    /// same reports, the same stops). A stop at a record leaves the rest of the batch uncounted, and `bytesIn` at
    /// what one job had read when it mapped that record. A range of a file counts its lines from 1 and its
    /// `bytesIn` from the input's start: `lineOffset` and `bytesInOffset` place them in the run.
    mutating func writeBatch(_ batch: consuming RecordBatch, lineOffset: Int = 0, bytesInOffset: Int = 0) {
        if let prepared = batch.prepared, !isStopped { output.willWrite(prepared: prepared.value) }
        batch.spill.withUnsafeBytes { spill in
            batch.output.withUnsafeBytes { mapped in
                var start = 0
                for (i, record) in batch.records.enumerated() {
                    guard !isStopped else { break }
                    let end = batch.outputEnds[i]
                    let mark = output.mappedRecordsCount
                    output.mappedRecords.writeRaw(UnsafeRawBufferPointer(rebasing: mapped[start..<end]))
                    start = end
                    let outcome = batch.outcomes[i]
                    // (The record's own bytes only for a rejected one, which is all `handle` reads them for: finding
                    // them retained and released their chunk for every record, on the thread that writes in order.)
                    var text = UnsafeRawBufferPointer(start: nil, count: 0)
                    if case .rejected = outcome {
                        text = UnsafeRawBufferPointer(rebasing: RecordBatch.bytes(of: record, chunks: batch.chunks, spill: spill).prefix(max(keepLimit, 0)))
                    }
                    let location = RecordLocation(line: record.location.line + lineOffset, byteOffset: record.location.byteOffset)
                    handle(outcome, mark: mark, record: text, input: batch.input, location: location, totalBytes: record.length)
                    if isStopped { bytesIn = record.bytesIn + bytesInOffset }
                }
            }
        }
        parallel?.recycle(consume batch)
    }
}
