/// The last `capacity` elements of a sequence seen one at a time, in a buffer that never
/// holds more (`coffer log --last N` over a log of any size).
struct LastElements<Element> {
    let capacity: Int
    private var storage: [Element] = []
    /// Where the next element goes, once the buffer is full.
    private var next = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    mutating func append(_ element: Element) {
        guard capacity > 0 else { return }
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[next] = element
            next = (next + 1) % capacity
        }
    }

    /// The elements kept, oldest first.
    var elements: [Element] { Array(storage[next...] + storage[..<next]) }
}
