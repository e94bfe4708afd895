#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one input read ahead produced, in order: blocks of encoded events (`RecordLogEncoder`), written by the
/// thread that maps the input and read, once, by the thread that writes the run's output — at the same time or
/// later.
///
/// Memory is bounded: blocks stay in memory up to `memoryBudget` bytes not yet read; past that they go to a
/// temporary file (created in `$TMPDIR`, or `/tmp`, and unlinked at once, so nothing is left behind whatever
/// happens, and closed as soon as the log is let go), read back in order. While the reader is on this log it drains it as it fills, so a writer over the
/// budget waits for the reader instead of spilling; a writer that cannot spill (no temporary file, a failed write)
/// waits likewise. One block larger than the budget is still taken when nothing else is held (one record's
/// output, like the one-job pipeline's own buffer).
final class RecordLog: @unchecked Sendable {
    // @unchecked: every stored var is read and written only with `mutex` held; the pthread objects live at fixed
    // heap addresses for the log's lifetime. The spill file's bytes past `spillEnd` are written without the mutex,
    // by the one writer, before the entry that points at them is queued.

    /// One block, in memory or in the spill file.
    private enum Entry {
        case memory([UInt8])
        case spilled(offset: Int, count: Int)
    }

    /// What the reader gets next.
    enum Next {
        case block([UInt8])
        /// The writer finished and every block was read.
        case end
        /// Reading a spilled block back failed (errno).
        case failed(Int32)
    }

    let memoryBudget: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var entries: [Entry] = []
    private var head = 0
    private var memoryBytes = 0
    private var spill: Int32 = -1
    private var spillEnd = 0
    private var cannotSpill = false
    private var finished = false
    private var cancelled = false
    private var beingRead = false
    /// The writer is writing into the spill file without the mutex (the file is closed only when it is not).
    private var writing = false
    /// Bytes that went to the spill file, all told (tests and measurements).
    private(set) var spilledBytes = 0
    /// The most bytes held in memory at once.
    private(set) var peakMemoryBytes = 0

    /// A log holding at most `memoryBudget` bytes in memory; past that, blocks spill into a temporary file in
    /// `temporaryDirectory` (nil: `$TMPDIR`, else `/tmp`).
    init(memoryBudget: Int, temporaryDirectory: String? = nil) {
        self.memoryBudget = memoryBudget
        self.temporaryDirectory = temporaryDirectory
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    private let temporaryDirectory: String?

    deinit {
        if spill >= 0 { close(spill) }
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    // MARK: The writer

    /// Appends a block (not empty). Waits while the budget is full and the block can neither spill nor be read;
    /// false once the log is cancelled (the run stopped: nothing more is wanted).
    func append(_ block: [UInt8]) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if cancelled { return false }
            if spill >= 0 && !cannotSpill {
                let offset = spillEnd
                spillEnd += block.count
                let fd = spill
                writing = true
                pthread_mutex_unlock(mutex)
                let ok = Self.writeAll(fd, block, at: offset)
                pthread_mutex_lock(mutex)
                writing = false
                if cancelled {
                    closeSpill()
                    return false
                }
                if ok {
                    entries.append(.spilled(offset: offset, count: block.count))
                    spilledBytes += block.count
                    pthread_cond_broadcast(changed)
                    return true
                }
                cannotSpill = true  // the disk is full or failing: hold in memory, waiting for the reader
                continue
            }
            if memoryBytes == 0 || memoryBytes + block.count <= memoryBudget {
                entries.append(.memory(block))
                memoryBytes += block.count
                peakMemoryBytes = max(peakMemoryBytes, memoryBytes)
                pthread_cond_broadcast(changed)
                return true
            }
            if !beingRead && !cannotSpill && spill < 0 {
                spill = Self.temporaryFile(in: temporaryDirectory)
                if spill < 0 { cannotSpill = true }
                continue
            }
            pthread_cond_wait(changed, mutex)
        }
    }

    /// The writer is done: the reader gets `end` after the last block.
    func finish() {
        pthread_mutex_lock(mutex)
        finished = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Nothing more is wanted: the writer's next `append` returns false, a reader waiting gets `end`, and memory
    /// is let go.
    func cancel() {
        pthread_mutex_lock(mutex)
        cancelled = true
        entries.removeAll()
        head = 0
        memoryBytes = 0
        if !writing { closeSpill() }  // else the writer closes it when its write returns
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Whether the log still holds its spill file open (its blocks take disk space until it is closed).
    var holdsSpillFile: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return spill >= 0
    }

    /// Closes the spill file (with the mutex held, the writer not writing): its space goes back at once.
    private func closeSpill() {
        if spill >= 0 { close(spill) }
        spill = -1
    }

    // MARK: The reader

    /// The next block, in order; waits for the writer.
    func next() -> Next {
        pthread_mutex_lock(mutex)
        if !beingRead {
            beingRead = true
            pthread_cond_broadcast(changed)  // a writer over its budget may now wait for this reader instead
        }
        while head == entries.count && !finished && !cancelled { pthread_cond_wait(changed, mutex) }
        guard head < entries.count, !cancelled else {
            pthread_mutex_unlock(mutex)
            return .end
        }
        let entry = entries[head]
        entries[head] = .memory([])
        head += 1
        if head >= 64 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        let fd = spill
        if case .memory(let bytes) = entry {
            memoryBytes -= bytes.count
            pthread_cond_broadcast(changed)
        }
        pthread_mutex_unlock(mutex)
        switch entry {
        case .memory(let bytes):
            return .block(bytes)
        case .spilled(let offset, let count):
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return .failed(n == 0 ? EIO : errno) }
                done += n
            }
            return .block(bytes)
        }
    }

    // MARK: Files

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
    }

    /// A new file in `directory` (default `$TMPDIR`, else `/tmp`), already unlinked; -1 when none can be made.
    static func temporaryFile(in directory: String?) -> Int32 {
        let dir = directory ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(dir)/streammap-spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return -1 }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }
}
