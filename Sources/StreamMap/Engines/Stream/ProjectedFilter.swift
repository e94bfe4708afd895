#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// The value of a scalar's text `raw` in a projected record (validated by the projector), or nil for an object or
/// an array (or text that does not read as one value, which the projector rules out).
func projectedScalar(_ raw: UnsafeRawBufferPointer, decodingInto decoded: inout ByteBuffer) -> JSONValue? {
    switch raw[0] {
    case UInt8(ascii: "n"): return .null
    case UInt8(ascii: "t"): return .bool(true)
    case UInt8(ascii: "f"): return .bool(false)
    case UInt8(ascii: "{"), UInt8(ascii: "["): return nil
    default: return try? LiftedStrings.event(raw, decodingInto: &decoded).scalarValue()
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
    @exclusivity(unchecked) private var decoded = ByteBuffer(capacity: 256)
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
    }

    deinit { decoded.deallocate() }

    /// Whether the filter keeps the record just projected, or nil when it must be evaluated the usual way.
    func keeps(_ record: UnsafeRawBufferPointer) -> Bool? {
        for s in objectSlots {
            let slot = slots[s]
            if slot.count > 1 || (slot.count == 1 && slot.length != 0) { return nil }
        }
        for s in valueSlots {
            let slot = slots[s]
            if slot.count > 1 { return nil }
            if slot.count == 1, record[slot.start] == UInt8(ascii: "{") || record[slot.start] == UInt8(ascii: "[") { return nil }
        }
        var unreadable = false
        let kept = filter.keeps { i in
            let slot = slots[valueSlots[i]]
            guard slot.count == 1 else { return nil }
            let raw = UnsafeRawBufferPointer(rebasing: record[slot.start..<(slot.start + slot.length)])
            guard let value = projectedScalar(raw, decodingInto: &decoded) else {
                unreadable = true  // (containers were ruled out above)
                return nil
            }
            return value
        }
        if unreadable { return nil }
        decided &+= 1
        return kept
    }
}
