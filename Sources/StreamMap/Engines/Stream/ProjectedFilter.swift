#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// What a slot of a projected record holds, for a reader of scalars: nothing (the key was not met), a scalar's
/// value, or something to decline the record for (the key met twice, an object or an array).
enum SlotRead {
    case absent
    case value(JSONValue)
    case decline

    init(_ slot: cjsonscan_slot, in record: UnsafeRawBufferPointer, decodingInto decoded: inout ByteBuffer) {
        guard slot.count == 1 else {
            self = slot.count == 0 ? .absent : .decline
            return
        }
        let raw = UnsafeRawBufferPointer(rebasing: record[slot.start..<(slot.start + slot.length)])
        switch raw[0] {
        case UInt8(ascii: "n"): self = .value(.null)
        case UInt8(ascii: "t"): self = .value(.bool(true))
        case UInt8(ascii: "f"): self = .value(.bool(false))
        case UInt8(ascii: "{"), UInt8(ascii: "["): self = .decline
        default:
            // (Text the projector vouched for reads as one value; anything else is declined all the same.)
            guard let value = try? LiftedStrings.event(raw, decodingInto: &decoded).scalarValue() else {
                self = .decline
                return
            }
            self = .value(value)
        }
    }

    /// The value for an evaluation's reader: nil when absent, and nil with `declined` set to decline.
    func value(declined: inout Bool) -> JSONValue? {
        switch self {
        case .absent: return nil
        case .value(let v): return v
        case .decline:
            declined = true
            return nil
        }
    }
}

/// A `where` evaluated on the values its paths have in the record, read straight from where the projector found
/// them (`cjsonscan_slot`) — no events replayed for the filter. Each path must be a path of keys whose value the
/// projection keeps whole. A record in which a value it reads is an object or an array, a key it reads comes
/// twice, or an object on its way is not one (the cases `KeyPath.read` decides in ways of its own) is declined,
/// and the engine evaluates the filter the usual way.
final class ProjectedFilter {
    private let filter: RecordFilter
    /// Per path of the filter, the slot of its value; and the slots of the objects on the paths.
    private let valueSlots: [Int]
    private let objectSlots: [Int]
    private let slots: UnsafeMutablePointer<cjsonscan_slot>
    @exclusivity(unchecked) private var decoded: ByteBuffer
    /// Records decided this way (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var decided = 0

    /// Nil unless `projector` reads each of the filter's paths, keys all the way, to its value.
    init?(_ filter: RecordFilter, projector: RecordProjector) {
        var valueSlots: [Int] = []
        var objectSlots: Set<Int> = []
        for path in filter.paths {
            guard !path.steps.isEmpty, !path.steps.contains(where: { KeyPath.arrayIndex($0) != nil }),
                  let (objects, value) = projector.slots(along: path.steps.map { Array($0.utf8) })
            else { return nil }
            valueSlots.append(value)
            objectSlots.formUnion(objects)
        }
        self.filter = filter
        self.valueSlots = valueSlots
        self.objectSlots = objectSlots.sorted()
        slots = projector.recordSlots()
        decoded = ByteBuffer(capacity: 256)  // (last: a failable initializer that returns nil runs no deinit)
    }

    deinit { decoded.deallocate() }

    /// Whether the filter keeps the record just projected, or nil when it must be evaluated the usual way.
    func keeps(_ record: UnsafeRawBufferPointer) -> Bool? {
        for s in objectSlots {
            let slot = slots[s]
            if slot.count > 1 || (slot.count == 1 && slot.length != 0) { return nil }
        }
        var declined = false
        let kept = filter.keeps { i in SlotRead(slots[valueSlots[i]], in: record, decodingInto: &decoded).value(declined: &declined) }
        if declined { return nil }
        decided &+= 1
        return kept
    }
}
