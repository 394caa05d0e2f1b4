import Synchronization

/// One block of secure memory handed out by `SecureAllocator` (an address and its extent;
/// ownership is tracked by the holder, so passing it between threads is fine).
struct SecureAllocation: @unchecked Sendable {   // an address and a size; its holder owns the block
    /// Start of the block (never nil, at least `capacity` bytes).
    let pointer: UnsafeMutableRawPointer
    /// Usable size in bytes (the size class for slab slots).
    let capacity: Int
    /// Slab id and slot index for slab slots; nil for a block with a region of its own.
    let slab: (id: Int, slot: Int)?
}

/// Small-block allocator over locked pages (internal).
///
/// Blocks live in `LockedPages` regions: locked into RAM, left out of core dumps, zero in a
/// forked child, wiped before they go back to the kernel. Mapping a region for every block
/// would cost two system calls each, so this allocator maps 32 KiB slabs and cuts them into
/// power-of-two slots (32 ... 2048 bytes), making small allocations O(1). Larger requests get
/// a region of their own. Empty slabs are unmapped (one spare per size class is kept), so the
/// memory held follows what is kept. Slots are zeroed on release; the caller wipes them too.
/// Thread-safe (one mutex).
///
/// Every slab and direct block is charged to a `SecureMemoryBudget` (its whole pages) before a
/// region is mapped, so no client can make cofferd lock more than its budget.
final class SecureAllocator: Sendable {
    static let shared = SecureAllocator()

    private let budget: SecureMemoryBudget

    /// An allocator charging `budget` (the process's budget for locked pages unless a test gives
    /// another).
    init(budget: SecureMemoryBudget = .lockedPages) {
        self.budget = budget
    }

    static let slabSize = 32 << 10
    static let sizeClasses = [32, 64, 128, 256, 512, 1024, 2048]

    private struct Slab {
        let base: UnsafeMutableRawPointer
        let sizeClass: Int        // index into sizeClasses
        var freeSlots: [Int32]    // stack of free slot indices
        var live: Int
    }

    private struct State: @unchecked Sendable {  // raw pointers are only touched under the lock
        var slabs: [Slab?] = []
        var unusedIDs: [Int] = []
        /// Per size class: ids of slabs that have at least one free slot.
        var partial: [[Int]] = Array(repeating: [], count: SecureAllocator.sizeClasses.count)
    }

    private let state = Mutex(State())
    /// Blocks handed out by `allocate` and not yet released.
    private let live = Atomic<Int>(0)

    /// How many blocks are in use: what tests watch to see that a buffer was released (and so
    /// wiped, since `release` zeroes every block first).
    package var liveAllocations: Int { live.load(ordering: .relaxed) }

    private static func sizeClass(for bytes: Int) -> Int? {
        sizeClasses.firstIndex { $0 >= bytes }
    }

    /// At least `bytes` (>= 1) of secure memory, or nil if the budget (or the kernel) has no room.
    func allocate(_ bytes: Int) -> SecureAllocation? {
        guard let block = allocateBlock(max(bytes, 1)) else { return nil }
        live.add(1, ordering: .relaxed)
        return block
    }

    private func allocateBlock(_ bytes: Int) -> SecureAllocation? {
        guard let c = Self.sizeClass(for: bytes) else { return direct(bytes) }
        let slot: SecureAllocation? = state.withLock { s in
            if s.partial[c].isEmpty {
                guard let base = Self.region(Self.slabSize, budget: budget) else { return nil }
                let slotSize = Self.sizeClasses[c], count = Self.slabSize / slotSize
                let slab = Slab(base: base, sizeClass: c,
                                freeSlots: (0..<Int32(count)).reversed(), live: 0)
                let id: Int
                if let reused = s.unusedIDs.popLast() { id = reused; s.slabs[id] = slab }
                else { id = s.slabs.count; s.slabs.append(slab) }
                s.partial[c].append(id)
            }
            let id = s.partial[c][s.partial[c].count - 1]
            let index = Int(s.slabs[id]!.freeSlots.removeLast())
            s.slabs[id]!.live += 1
            if s.slabs[id]!.freeSlots.isEmpty { s.partial[c].removeLast() }
            let size = Self.sizeClasses[c]
            return SecureAllocation(pointer: s.slabs[id]!.base + index * size, capacity: size,
                                    slab: (id, index))
        }
        // No room for a new slab: a smaller direct block may still fit.
        return slot ?? direct(bytes)
    }

    private func direct(_ bytes: Int) -> SecureAllocation? {
        guard let pointer = Self.region(bytes, budget: budget) else { return nil }
        return SecureAllocation(pointer: pointer, capacity: LockedPages.rounded(bytes), slab: nil)
    }

    /// A locked region of at least `bytes`, its whole pages charged to `budget`; nil if the
    /// budget or the kernel has no room.
    private static func region(_ bytes: Int, budget: SecureMemoryBudget) -> UnsafeMutableRawPointer? {
        let charge = LockedPages.rounded(bytes)
        guard budget.take(charge) else { return nil }
        guard let region = LockedPages.map(bytes) else {
            budget.give(charge)
            return nil
        }
        return region
    }

    /// Unmaps a region from `region` (wiping it) and gives its charge back to the budget.
    private func unmap(_ region: UnsafeMutableRawPointer, bytes: Int) {
        LockedPages.unmap(region, bytes)
        budget.give(LockedPages.rounded(bytes))
    }

    /// Zeroes and releases a block from `allocate`.
    func release(_ allocation: SecureAllocation) {
        wipe(allocation.pointer, allocation.capacity)
        live.subtract(1, ordering: .relaxed)
        guard let (id, index) = allocation.slab else {
            unmap(allocation.pointer, bytes: allocation.capacity)
            return
        }
        let emptied: UnsafeMutableRawPointer? = state.withLock { s in
            let c = s.slabs[id]!.sizeClass
            if s.slabs[id]!.freeSlots.isEmpty { s.partial[c].append(id) }
            s.slabs[id]!.freeSlots.append(Int32(index))
            s.slabs[id]!.live -= 1
            // Unmap an empty slab unless it is the last one of its class.
            guard s.slabs[id]!.live == 0, s.partial[c].count > 1 else { return nil }
            let base = s.slabs[id]!.base
            s.partial[c].removeAll { $0 == id }
            s.slabs[id] = nil
            s.unusedIDs.append(id)
            return base
        }
        if let emptied { unmap(emptied, bytes: Self.slabSize) }
    }

    /// Number of slabs currently held (tests and diagnostics).
    var slabCount: Int { state.withLock { s in s.slabs.count - s.unusedIDs.count } }
}
