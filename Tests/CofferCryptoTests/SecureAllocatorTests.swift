import Testing
@testable import CofferCrypto

struct SecureAllocatorTests {
    /// Random sizes, random release order: every block keeps its own contents, and empty slabs
    /// go back to the pool.
    @Test func stress() throws {
        Crypto.initialize()
        let allocator = SecureAllocator()
        var rng = SystemRandomNumberGenerator()
        var live: [(SecureAllocation, UInt8, Int)] = []
        for round in 0..<4000 {
            if live.isEmpty || Int.random(in: 0..<3, using: &rng) > 0 {
                let size = Int.random(in: 1...3000, using: &rng)
                let block = try #require(allocator.allocate(size))
                #expect(block.capacity >= size)
                let pattern = UInt8(truncatingIfNeeded: round)
                block.pointer.initializeMemory(as: UInt8.self, repeating: pattern, count: size)
                live.append((block, pattern, size))
            } else {
                let (block, pattern, size) = live.remove(at: Int.random(in: 0..<live.count, using: &rng))
                let bytes = UnsafeRawBufferPointer(start: block.pointer, count: size)
                #expect(bytes.allSatisfy { $0 == pattern })
                allocator.release(block)
            }
        }
        #expect(allocator.slabCount > 0)
        for (block, pattern, size) in live {
            #expect(UnsafeRawBufferPointer(start: block.pointer, count: size).allSatisfy { $0 == pattern })
            allocator.release(block)
        }
        // At most one spare slab per size class is kept.
        #expect(allocator.slabCount <= SecureAllocator.sizeClasses.count)
    }

    @Test func releasedSlotsAreZeroed() throws {
        Crypto.initialize()
        let allocator = SecureAllocator()
        let a = try #require(allocator.allocate(100))
        a.pointer.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 100)
        allocator.release(a)
        // The same slot is handed out again (LIFO) and holds no trace of the old bytes.
        let b = try #require(allocator.allocate(100))
        #expect(b.pointer == a.pointer)
        #expect(UnsafeRawBufferPointer(start: b.pointer, count: b.capacity).allSatisfy { $0 == 0 })
        allocator.release(b)
    }
}
