/// A dictionary that holds at most `capacity` entries: inserting one more drops the entry
/// inserted longest ago. Not thread-safe.
struct BoundedCache<Key: Hashable, Value> {
    let capacity: Int
    private var entries: [Key: (value: Value, serial: UInt64)] = [:]
    /// Keys in insertion order, with the serial they were inserted with; a key removed or
    /// inserted again since leaves a stale row here, skipped (and now and then swept out).
    private var order: [(key: Key, serial: UInt64)] = []
    private var oldest = 0
    private var nextSerial: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a cache needs room for one entry")
        self.capacity = capacity
    }

    var count: Int { entries.count }

    subscript(key: Key) -> Value? { entries[key]?.value }

    /// Stores `value` for `key` as the newest entry, dropping the oldest if that makes too many.
    mutating func insert(_ value: Value, for key: Key) {
        nextSerial += 1
        entries[key] = (value, nextSerial)
        order.append((key, nextSerial))
        while entries.count > capacity {
            let (key, serial) = order[oldest]
            oldest += 1
            if entries[key]?.serial == serial { entries[key] = nil }
        }
        if order.count > 2 * entries.count + 64 {   // mostly stale rows: sweep them out
            order = order[oldest...].filter { entries[$0.key]?.serial == $0.serial }
            oldest = 0
        }
    }

    mutating func removeValue(forKey key: Key) {
        entries[key] = nil
    }
}
