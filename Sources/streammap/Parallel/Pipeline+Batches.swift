import StreamMap

/// The pipeline's side of `--jobs N`: records are cut into batches here (see the record callbacks in Pipeline.swift),
/// mapped on worker threads (`ParallelMapping`), and written back here in input order through the same `handle` as
/// with one job — so the output, the rejects, the messages, the counts, the stops and the exit status are the same.
extension Pipeline {
    /// Starts the worker threads when more than one job is asked for. If no thread can start, says so and maps on
    /// this thread.
    mutating func startWorkers() {
        guard settings.jobs > 1, let makeBatchMapper else { return }
        do throws(Errno) {
            parallel = try ParallelMapping(jobs: settings.jobs, batchBytes: settings.batchBytes, makeBatchMapper: makeBatchMapper)
        } catch {
            console.error("--jobs \(settings.jobs): cannot start threads (\(error.description)); mapping on one thread")
        }
    }

    /// Hands the batch being cut to the workers (if it holds records), after making room in the window by writing
    /// the oldest batches; then writes whatever batches are mapped, in order.
    mutating func submitBatch() {
        guard let parallel else { return }
        while stop == nil && parallel.inFlight >= parallel.window {
            guard let batch = parallel.nextMapped(wait: true) else { break }
            writeBatch(batch)
        }
        guard stop == nil else {
            parallel.discardAll()
            return
        }
        parallel.submitCurrent(input: inputName)
        while stop == nil, let batch = parallel.nextMapped(wait: false) { writeBatch(batch) }
        if stop != nil { parallel.discardAll() }
    }

    /// Submits the batch being cut (a record left unfinished in it is dropped, as the one-job pipeline drops a
    /// record cut by a read error or a signal) and writes every batch in flight: afterwards, everything read so far
    /// has been written, or the run has stopped.
    mutating func finishBatches() {
        guard let parallel else { return }
        batching = false
        submitBatch()
        while stop == nil, let batch = parallel.nextMapped(wait: true) { writeBatch(batch) }
        if stop != nil { parallel.discardAll() }
    }

    /// The NDJSON record being cut has grown past `longRecordBytes`: the batches before it are written, then it
    /// streams through this thread's engine as with one job, in constant memory however long it is.
    mutating func streamLongRecord() {
        let start = parallel!.current.takeOpenRecord()
        finishBatches()
        guard stop == nil else {
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
    /// what one job had read when it mapped that record.
    mutating func writeBatch(_ batch: consuming RecordBatch) {
        batch.spill.withUnsafeBytes { spill in
            batch.output.withUnsafeBytes { mapped in
                var start = 0
                for (i, record) in batch.records.enumerated() {
                    guard stop == nil else { break }
                    let end = batch.outputEnds[i]
                    let mark = output.writer.bytes.count
                    output.writer.writeRaw(UnsafeRawBufferPointer(rebasing: mapped[start..<end]))
                    start = end
                    let text = UnsafeRawBufferPointer(rebasing: RecordBatch.bytes(of: record, chunks: batch.chunks, spill: spill).prefix(max(keepLimit, 0)))
                    handle(batch.outcomes[i], mark: mark, record: text, input: batch.input, location: record.location,
                           totalBytes: record.length)
                    if stop != nil { stats.bytesIn = record.bytesIn }
                }
            }
        }
        parallel?.recycle(consume batch)
    }
}
