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

    /// An allocator stops at its budget (nil, nothing charged), and everything it took is given
    /// back when released, so the pool keeps its reserve for libgcrypt.
    @Test func stopsAtItsBudget() throws {
        Crypto.initialize()
        let budget = SecureMemoryBudget(limit: 200 << 10)
        let allocator = SecureAllocator(budget: budget)
        var blocks: [SecureAllocation] = []
        while let block = allocator.allocate(3000) { blocks.append(block) }
        #expect(blocks.count > 10)
        #expect(budget.used <= budget.limit)
        #expect(throws: CryptoError.secureMemoryExhausted(requested: 64 << 10)) {
            try SecureReservation(64 << 10, budget: budget)
        }
        for block in blocks { allocator.release(block) }
        #expect(budget.used <= SecureAllocator.slabSize + SecureMemoryBudget.blockOverhead)
        // What was given back can be taken again.
        let reservation = try SecureReservation(64 << 10, budget: budget)
        _ = reservation
    }

    /// The shared budget leaves a reserve of the pool to libgcrypt.
    @Test func sharedBudgetKeepsAReserve() {
        let (used, limit) = Crypto.secureMemoryUse
        #expect(used <= limit)
        #expect(SecureMemoryBudget.reserve(forPool: 4 << 20) == 512 << 10)
        #expect(SecureMemoryBudget.reserve(forPool: 256 << 10) == 128 << 10)
        #expect(limit < 4 << 20)
    }
}
