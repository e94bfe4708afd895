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
    // @unchecked: `results`, `free` and `stopped` are read and written only inside `monitor`; `decoding` and `fd`
    // are the thread's alone once it started; the buffers travel through the two lists.

    private let monitor = Monitor()
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
        for _ in 0..<Self.depth {
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: roomBytes, alignment: 64)
            buffers.append(b)
            free.append(b)
        }
    }

    deinit {
        for b in buffers { b.deallocate() }
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
        while true {
            let next: (DecodedRead, UnsafeMutableRawBufferPointer)? = monitor.withLock {
                if results.isEmpty { monitor.wait(milliseconds: 50) }
                return results.isEmpty ? nil : results.removeFirst()
            }
            if let (result, buffer) = next { return (result, buffer) }
            if stopRequested() { return (.failed(errno: EINTR), nil) }
        }
    }

    /// Gives back a buffer `take` lent, for the thread to fill again.
    func recycle(_ buffer: UnsafeMutableRawBufferPointer) {
        monitor.withLock {
            free.append(buffer)
            monitor.broadcast()
        }
    }

    /// Stops the thread (after the read it is making) and waits for it.
    func stop() {
        monitor.withLock {
            stopped = true
            monitor.broadcast()
        }
        thread.join()
    }

    // MARK: The thread

    private func run() {
        defer { decoding.release() }
        while true {
            let taken: UnsafeMutableRawBufferPointer? = monitor.withLock {
                while free.isEmpty && !stopped { monitor.wait() }
                return stopped ? nil : free.removeLast()
            }
            guard let buffer = taken else { return }
            let fd = self.fd
            let result = decoding.read(into: buffer) { room in self.rawRead(fd, into: room) }
            let done: Bool = monitor.withLock {
                results.append((result, buffer))
                monitor.broadcast()
                return stopped
            }
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
                if monitor.withLock({ stopped }) {
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
}
