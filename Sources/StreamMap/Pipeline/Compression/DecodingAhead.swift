#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decompression on a thread of its own, pipelined with framing and mapping: the thread makes exactly the reads
/// the pipeline's thread would have made (`InputDecoding.read`, rooms of the same size, the same raw reads of the
/// descriptor), up to `depth` of them ahead, and the pipeline takes their results in order. So what the pipeline
/// sees — text, read sizes, `bytesIn`, faults and their offsets — is what decompressing on its own thread gives,
/// while inflating one read overlaps framing and mapping the one before.
///
/// The thread never blocks in read(2) for long: it polls the descriptor (50 ms at a time) and looks for `stop`, so
/// a quiet pipe never keeps the run from ending.
final class DecodingAhead: @unchecked Sendable {
    // @unchecked: `results`, `free`, `stopped` and `ended` are read and written only with `mutex` held; `decoding`
    // and `fd` are the thread's alone once it started; the buffers travel through the two lists.

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var results: [(DecodedRead, UnsafeMutableRawBufferPointer)] = []
    private var free: [UnsafeMutableRawBufferPointer] = []
    private var stopped = false
    private var thread = WorkerThreads()
    private var decoding: InputDecoding
    private let fd: Int32
    /// Buffers in use (for freeing them all at the end).
    private var buffers: [UnsafeMutableRawBufferPointer] = []

    /// Reads made ahead, at most.
    static let depth = 4

    /// Takes over `decoding` (its first read already made on the caller's thread) and reads on from `fd` in rooms
    /// of `roomBytes`; nil when no thread can start (then the caller decodes as before).
    static func start(_ decoding: inout InputDecoding, fd: Int32, roomBytes: Int) -> DecodingAhead? {
        let ahead = DecodingAhead(decoding: decoding, fd: fd, roomBytes: roomBytes)
        guard ahead.thread.start(1, { ahead.run() }) == nil, ahead.thread.count == 1 else {
            ahead.decoding = InputDecoding(detect: false)  // handed back untouched
            return nil
        }
        decoding = InputDecoding(detect: false)  // the thread owns the state now (and releases it)
        return ahead
    }

    private init(decoding: InputDecoding, fd: Int32, roomBytes: Int) {
        self.decoding = decoding
        self.fd = fd
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        for _ in 0..<Self.depth {
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: roomBytes, alignment: 64)
            buffers.append(b)
            free.append(b)
        }
    }

    deinit {
        for b in buffers { b.deallocate() }
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// The next read's result, its text copied into `room` (which must be as large as the rooms the thread fills).
    /// While waiting, asks `stopRequested` every 50 ms: true gives `failed(EINTR)`, as an interrupted read would.
    func read(into room: UnsafeMutableRawBufferPointer, stopRequested: () -> Bool) -> DecodedRead {
        let (result, buffer) = take(stopRequested: stopRequested)
        if case .bytes(let n) = result {
            precondition(n <= room.count, "DecodingAhead: a room smaller than the thread's")
            room.baseAddress!.copyMemory(from: buffer!.baseAddress!, byteCount: n)
        }
        if let buffer { recycle(buffer) }
        return result
    }

    /// The next read's result and the buffer that holds its text, lent until `recycle` (no copy: the caller frames
    /// the text where it lies); no buffer when stopped. While waiting, asks `stopRequested` as `read` does.
    func take(stopRequested: () -> Bool) -> (DecodedRead, UnsafeMutableRawBufferPointer?) {
        pthread_mutex_lock(mutex)
        while results.isEmpty {
            pthread_mutex_unlock(mutex)
            if stopRequested() { return (.failed(errno: EINTR), nil) }
            pthread_mutex_lock(mutex)
            if results.isEmpty { Self.wait(changed, mutex, milliseconds: 50) }
        }
        let (result, buffer) = results.removeFirst()
        pthread_mutex_unlock(mutex)
        return (result, buffer)
    }

    /// Gives back a buffer `take` lent, for the thread to fill again.
    func recycle(_ buffer: UnsafeMutableRawBufferPointer) {
        pthread_mutex_lock(mutex)
        free.append(buffer)
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Stops the thread (after the read it is making) and waits for it.
    func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        thread.join()
    }

    // MARK: The thread

    private func run() {
        defer { decoding.release() }
        while true {
            pthread_mutex_lock(mutex)
            while free.isEmpty && !stopped { pthread_cond_wait(changed, mutex) }
            if stopped {
                pthread_mutex_unlock(mutex)
                return
            }
            let buffer = free.removeLast()
            pthread_mutex_unlock(mutex)
            let fd = self.fd
            let result = decoding.read(into: buffer) { room in self.rawRead(fd, into: room) }
            pthread_mutex_lock(mutex)
            results.append((result, buffer))
            pthread_cond_broadcast(changed)
            let done = stopped
            pthread_mutex_unlock(mutex)
            switch result {
            case .bytes: if done { return }
            case .end, .failed, .corrupt, .unsupportedEncoding: return
            }
        }
    }

    /// read(2), retried on EINTR; waits for a quiet descriptor 50 ms at a time, giving up (EINTR) once stopped.
    private func rawRead(_ fd: Int32, into room: UnsafeMutableRawBufferPointer) -> Int? {
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, 50)
            if ready == 0 || (ready < 0 && errno == EINTR) {
                pthread_mutex_lock(mutex)
                let done = stopped
                pthread_mutex_unlock(mutex)
                if done {
                    errno = EINTR
                    return nil
                }
                continue
            }
            let n = Glibc.read(fd, room.baseAddress, room.count)
            if n >= 0 { return n }
            if errno != EINTR { return nil }
        }
    }

    private static func wait(_ cond: UnsafeMutablePointer<pthread_cond_t>, _ mutex: UnsafeMutablePointer<pthread_mutex_t>, milliseconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var deadline = now
        deadline.tv_nsec += milliseconds * 1_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        pthread_cond_timedwait(cond, mutex, &deadline)
    }
}
