import Foundation
import Testing
@testable import CofferCrypto

struct SecureAllocatorTests {
    /// Random sizes, random release order: every block keeps its own contents, and empty slabs
    /// go back to the pool.
    @Test func stress() throws {
        Crypto.initialize()
        // A budget of its own, so that the blocks it keeps do not crowd out other tests.
        let allocator = SecureAllocator(budget: SecureMemoryBudget(limit: 16 << 20))
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
        #expect(budget.used == 0)
        // What was given back can be taken again.
        let reservation = try SecureReservation(64 << 10, budget: budget)
        _ = reservation
    }

    /// The default 4 MiB are a 512 KiB libgcrypt pool, whose budget leaves libgcrypt a reserve,
    /// and 3.5 MiB of pages for secrets.
    @Test func theLockedMemoryIsShared() {
        let (used, limit) = Crypto.secureMemoryUse
        #expect(used <= limit)
        #expect(limit == (4 << 20) - (512 << 10))
        #expect(SecureMemoryBudget.libgcryptPool.limit == 256 << 10)
        #expect(Crypto.lockedMemoryShares(4 << 20) == (pool: 512 << 10, pages: (4 << 20) - (512 << 10)))
        #expect(Crypto.lockedMemoryShares(64 << 10) == (pool: 64 << 10, pages: 128 << 10))
        #expect(SecureMemoryBudget.reserve(forPool: 4 << 20) == 512 << 10)
        #expect(SecureMemoryBudget.reserve(forPool: 256 << 10) == 128 << 10)
    }

    /// A size with no whole number of pages above it is refused as too large, not a trap.
    @Test func aSizeNearTheLargestIsRefused() {
        #expect(LockedPages.rounded(Int.max) % LockedPages.pageSize == 0)
        #expect(LockedPages.rounded(Int.max) > Int.max - LockedPages.pageSize)
        #expect(throws: CryptoError.self) { _ = try SecureBytes(count: Int.max - 1) }
    }

    /// A block's pages are locked, left out of core dumps and wiped in a forked child, and are
    /// charged whole; what is released goes back, so the locked memory follows what is kept.
    @Test func blocksLiveInLockedPagesThatAreGivenBack() throws {
        Crypto.initialize()
        try #require(Crypto.isSecureMemoryLocked, "memory cannot be locked here (ulimit -l)")
        let budget = SecureMemoryBudget(limit: 4 << 20)
        let allocator = SecureAllocator(budget: budget)
        let blocks = try [100, 3000, 64 << 10].map { try #require(allocator.allocate($0)) }
        for block in blocks {
            let flags = try #require(Self.mappingFlags(containing: block.pointer))
            for flag in ["lo", "dd", "wf"] { #expect(flags.contains(Substring(flag)), "VmFlags: \(flags)") }
        }
        #expect(budget.used == SecureAllocator.slabSize + 4096 + (64 << 10))
        for block in blocks { allocator.release(block) }
        // The slab is kept as its class's spare; the two blocks of their own are unmapped.
        #expect(budget.used == SecureAllocator.slabSize)
    }

    /// The VmFlags of the mapping of /proc/self/smaps that holds `address`.
    static func mappingFlags(containing address: UnsafeMutableRawPointer) -> [Substring]? {
        // Read to the end: a /proc file says it is empty.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
              let bytes = try? file.readToEnd() else { return nil }
        try? file.close()
        let text = String(decoding: bytes, as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inside = false
        for line in text.split(separator: "\n") {
            let bounds = line.prefix { $0 != " " }.split(separator: "-")
            if bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16) {
                inside = low <= target && target < high
            } else if inside, line.hasPrefix("VmFlags:") {
                return Array(line.split(separator: " ").dropFirst())
            }
        }
        return nil
    }
}
