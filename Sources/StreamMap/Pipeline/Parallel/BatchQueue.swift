#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hand-off between the reading thread and the workers (`--jobs`): batches to map, first come first served, and
/// mapped batches, fetched by sequence number. One mutex guards everything; workers wait on `workAvailable`, the
/// reading thread on `batchMapped`. The queue does not bound itself: the reading thread never has more than its
/// window of batches submitted and not yet fetched (`ParallelMapping`).
///
/// Every hand-off consumes the batch (`consume`), so the side that receives it holds the only reference to its
/// buffers: a reference kept a moment too long by the side that gave it up would make the receiver's first
/// mutation copy half a megabyte into fresh pages (BatchReuseTests).
final class BatchQueue: @unchecked Sendable {
    // @unchecked: every stored var is read and written only with `mutex` held; the pthread objects live at fixed
    // heap addresses for the queue's lifetime.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workAvailable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let batchMapped = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var waiting: [RecordBatch] = []
    private var mapped: [Int: RecordBatch] = [:]
    private var closed = false
    /// The sequence number the reading thread waits for (nil: it is not waiting): only that batch wakes it.
    private var awaited: Int?

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(workAvailable, nil)
        pthread_cond_init(batchMapped, nil)
    }

    deinit {
        pthread_cond_destroy(batchMapped)
        pthread_cond_destroy(workAvailable)
        pthread_mutex_destroy(mutex)
        batchMapped.deallocate()
        workAvailable.deallocate()
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: The reading thread

    /// Queues a batch for the next free worker.
    func submit(_ batch: consuming RecordBatch) {
        pthread_mutex_lock(mutex)
        waiting.append(consume batch)
        pthread_cond_signal(workAvailable)
        pthread_mutex_unlock(mutex)
    }

    /// The mapped batch with this sequence number: waits for it when `wait`, else nil when it is not mapped yet.
    func mappedBatch(_ sequence: Int, wait: Bool) -> RecordBatch? {
        locked {
            while true {
                if let batch = mapped.removeValue(forKey: sequence) { return batch }
                guard wait, !closed else { return nil }
                awaited = sequence
                pthread_cond_wait(batchMapped, mutex)
                awaited = nil
            }
        }
    }

    /// No more work: waiting batches are dropped, idle workers return from `next()` with nil, busy ones after their
    /// batch.
    func close() {
        locked {
            closed = true
            waiting.removeAll()
            mapped.removeAll()
            pthread_cond_broadcast(workAvailable)
            pthread_cond_broadcast(batchMapped)
        }
    }

    // MARK: Workers

    /// The next batch to map; waits for one. Nil once the queue is closed.
    func next() -> RecordBatch? {
        locked {
            while waiting.isEmpty && !closed { pthread_cond_wait(workAvailable, mutex) }
            return closed ? nil : waiting.removeFirst()
        }
    }

    /// Hands a mapped batch back (dropped when the queue is closed).
    func finished(_ batch: consuming RecordBatch) {
        pthread_mutex_lock(mutex)
        if !closed {
            let sequence = batch.sequence
            mapped[sequence] = consume batch
            if sequence == awaited { pthread_cond_signal(batchMapped) }
        }
        pthread_mutex_unlock(mutex)
    }
}
