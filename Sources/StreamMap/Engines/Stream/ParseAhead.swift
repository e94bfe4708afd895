// ParseAhead.swift — the stream engine's policy for getting ahead of yajl: members no one reads are skipped by
// the scanning kernel (`cjsonscan_skip_member_value`) instead of being parsed silenced, and containers a copy
// takes as they are are copied from their text (`VerbatimCopier`), yajl going on after them (`resume(at:)`,
// the JSON layer's mechanism). Only where it pays: runs and containers long enough, array elements backed off.

internal import CJSONScan

extension StreamParser {
    /// Runs of skipped members shorter than this (or than 8 bytes a level of nesting) are left to yajl: skipping
    /// ahead costs a new handle and a few bytes of priming a level.
    static let skipAheadMinimum = 48
    /// Containers shorter than this are left to yajl's events by `copiesAhead` (copying ahead costs what skipping
    /// ahead costs, and a short container's events are cheap).
    static let copyAheadMinimum = 96
    /// Array element depths tracked by the back-off (`copyBackoff`).
    static let backoffSlots = 64

    /// Called from the key callback when the member of `key` is read by no one (its events are silenced), with
    /// `skips`, which tells whether the member of a later key of the same object is read by no one either (and
    /// then silences it too). When the key was lexed in place and `cjsonscan_skip_member_value` vouches for the
    /// colon and value after it — and for the members after it whose keys `skips` takes — and they make at least
    /// `skipAheadMinimum` bytes, notes where the last value ends (`resume(at:)`) and returns true: the callback then
    /// stops yajl, which goes on after that value. Else false, and yajl parses the value (silenced) as before: an
    /// invalid value is reported by yajl and the strict scanner exactly as without this.
    @inline(__always)
    final func skipsAhead(after key: UnsafeRawBufferPointer, _ skips: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard let keyStart = key.baseAddress, keyStart >= chunkStart, keyStart < chunkEnd,
              chunkEnd - keyStart >= Self.skipAheadMinimum else { return false }
        return skipsAhead(from: keyStart + key.count + 1, skips)  // past the closing quote
    }

    @inline(never)
    private func skipsAhead(from start: UnsafeRawPointer, _ skips: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        let budget = maximumDepth - depth
        var from = start
        var end: UnsafeRawPointer?
        while true {
            let length = cjsonscan_skip_member_value(from.assumingMemoryBound(to: UInt8.self), chunkEnd - from, budget)
            guard length > 0 else { break }
            let valueEnd = from + length
            end = valueEnd
            var keyLength = 0
            let keyOffset = cjsonscan_next_key(valueEnd.assumingMemoryBound(to: UInt8.self), chunkEnd - valueEnd, &keyLength)
            guard keyOffset > 0 else { break }
            let next = UnsafeRawBufferPointer(start: valueEnd + keyOffset, count: keyLength)
            guard skips(next) else { break }
            from = valueEnd + keyOffset + keyLength + 1
        }
        // At least as long as twice the priming (`resumeAfterSkippedValue`: up to 4 bytes a level), so that deep
        // records stay linear.
        guard let end, end - start >= max(Self.skipAheadMinimum, 8 &* depth) else { return false }
        resume(at: end)
        return true
    }

    /// Called from a container's start callback (after `enter(object:)`) when its consumer copies it as it is:
    /// when the container's bracket was lexed from the bytes in hand, the skipper vouches for the whole container
    /// and `copier` finds no duplicate key in it, and it makes at least `copyAheadMinimum` bytes (and 8 a level
    /// of nesting), returns the canonical text of its inside and stops yajl there: the callback returns false,
    /// and yajl goes on at the container's closing bracket (`resume(at:)`), whose event then ends the copy. Else
    /// nil, and yajl goes on inside the container as before.
    ///
    /// A container that could not be copied is not tried again from inside it (until it ends, or the next chunk):
    /// no byte is read by more than one failed try per chunk, so deep records stay linear.
    final func copiesAhead(with copier: VerbatimCopier) -> UnsafeRawBufferPointer? {
        guard depth <= copyBarrier else { return nil }
        let open = chunkStart + consumedInChunk - 1
        let minimum = max(Self.copyAheadMinimum, 8 &* depth)
        guard open >= chunkStart, chunkEnd - open >= minimum else { return nil }
        let bracket = open.load(as: UInt8.self)
        guard bracket == (isObject(atLevel: depth) ? UInt8(ascii: "{") : UInt8(ascii: "[")) else { return nil }
        // Elements of an array are alike: after a short one, the next few are not tried (object members differ).
        let inArray = depth > 1 && !isObject(atLevel: depth - 1)
        let slot = depth & (Self.backoffSlots - 1)
        let copyBackoff = self.copyBackoff ?? allocateCopyBackoff()
        if inArray && copyBackoff[slot].wait > 0 {
            copyBackoff[slot].wait -= 1
            copyBarrier = depth  // (nor what is inside it)
            return nil
        }
        let p = open.assumingMemoryBound(to: UInt8.self)
        let length = cjsonscan_skip_value(p, chunkEnd - open, maximumDepth - depth + 1)
        if inArray && length > 0 && length < minimum {
            // Too short to gain: the next elements are likely short too (an array of small objects), so the next
            // 1, 2, 4 … 64 of them are left to yajl without reading them first.
            let next = min(max(copyBackoff[slot].span * 2, 1), 64)
            copyBackoff[slot] = (next, next)
        }
        guard length >= minimum, let text = copier.canonicalText(of: UnsafeRawBufferPointer(start: open, count: length)) else {
            copyBarrier = depth
            return nil
        }
        if inArray { copyBackoff[slot] = (0, 0) }
        resume(at: open + length - 1)  // the closing bracket
        return UnsafeRawBufferPointer(rebasing: text[1..<text.count - 1])
    }

    @inline(never)
    private func allocateCopyBackoff() -> UnsafeMutablePointer<(wait: UInt8, span: UInt8)> {
        let slots = UnsafeMutablePointer<(wait: UInt8, span: UInt8)>.allocate(capacity: Self.backoffSlots)
        slots.initialize(repeating: (0, 0), count: Self.backoffSlots)
        copyBackoff = slots
        return slots
    }

    /// A container ends at `depth` (the depth outside it): a copy barrier it set goes.
    @inline(__always)
    final func containerEnded() {
        if depth < copyBarrier { copyBarrier = .max }
    }
}
