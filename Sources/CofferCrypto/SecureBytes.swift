#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Growable byte buffer in locked secure memory; wiped when released. Reference type, not thread-safe.
///
/// Blocks come from `SecureAllocator` (slots in slabs of locked pages; see there)
/// and are zeroed explicitly whenever they are released, moved on growth, or shrunk.
///
/// Use it for keys, passwords and plaintext secrets. Bounds violations in the non-throwing
/// accessors (`subscript`, `unprotectedArray`) are programming errors and trap;
/// `slice` throws `.invalidInput` instead so that parsers of untrusted data can recover.
public final class SecureBytes: @unchecked Sendable {   // secure memory passed between threads, never used by two at once
    /// The secure block (from `SecureAllocator`: at least one byte, never nil).
    private var allocation: SecureAllocation
    /// Number of bytes in use.
    public internal(set) var count: Int

    var storage: UnsafeMutableRawPointer { allocation.pointer }
    var capacity: Int { allocation.capacity }

    /// A zero-filled secure block with room for `bytes` bytes.
    private static func allocate(_ bytes: Int) throws -> SecureAllocation {
        Crypto.ensureInitialized()
        guard bytes >= 0 else { throw CryptoError.invalidInput("negative size \(bytes)") }
        guard let block = SecureAllocator.shared.allocate(bytes) else {
            throw CryptoError.secureMemoryExhausted(requested: bytes)
        }
        block.pointer.initializeMemory(as: UInt8.self, repeating: 0, count: block.capacity)
        return block
    }

    /// A buffer of `count` zero bytes.
    public init(count: Int) throws {
        allocation = try Self.allocate(count)
        self.count = count
    }

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int) throws {
        allocation = try Self.allocate(capacity)
        count = 0
    }

    /// A secure copy of `bytes` (the array itself is left as it is).
    public convenience init(_ bytes: [UInt8]) throws {
        try self.init(bytes[...])
    }

    /// A secure copy of `bytes` (the slice itself is left as it is).
    public convenience init(_ bytes: ArraySlice<UInt8>) throws {
        try self.init(capacity: bytes.count)
        try append(bytes)
    }

    /// Copies `source` into secure memory, then overwrites `source` with zeros.
    ///
    /// Only the storage of `source` is wiped: copies of the array made earlier by the caller
    /// keep their bytes (Swift copy-on-write duplicates shared storage before writing).
    public convenience init(wiping source: inout [UInt8]) throws {
        try self.init(source)
        wipe(&source)
    }

    deinit {
        SecureAllocator.shared.release(allocation)   // zeroes the whole block first
    }

    public var isEmpty: Bool { count == 0 }

    public subscript(index: Int) -> UInt8 {
        get {
            precondition(index >= 0 && index < count, "SecureBytes index out of range")
            return storage.load(fromByteOffset: index, as: UInt8.self)
        }
        set {
            precondition(index >= 0 && index < count, "SecureBytes index out of range")
            storage.storeBytes(of: newValue, toByteOffset: index, as: UInt8.self)
        }
    }

    // MARK: Growing

    /// Makes room for `additional` more bytes, moving to a larger secure block if needed.
    func reserve(additional: Int) throws {
        let (needed, overflow) = count.addingReportingOverflow(additional)
        guard !overflow else { throw CryptoError.invalidInput("size overflow") }
        if needed <= capacity { return }
        let newAllocation = try Self.allocate(max(needed, capacity &* 2, 16))
        newAllocation.pointer.copyMemory(from: storage, byteCount: count)
        SecureAllocator.shared.release(allocation)   // zeroes the old block first
        allocation = newAllocation
    }

    /// Appends raw bytes (internal: the source may itself be secure memory).
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        try reserve(additional: bytes.count)
        (storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    public func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try append($0) }
    }

    public func append(_ bytes: ArraySlice<UInt8>) throws {
        try bytes.withUnsafeBytes { try append($0) }
    }

    public func append(_ byte: UInt8) throws {
        try reserve(additional: 1)
        storage.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    public func append(_ other: SecureBytes) throws {
        if other === self {
            let copy = try slice(0..<count)
            try append(copy)
            return
        }
        try other.withUnsafeBytes { try append($0) }
    }

    // MARK: Fixed-width little-endian helpers

    /// Little-endian fixed-width helpers used by serializers.
    public func appendUInt32LE(_ v: UInt32) throws {
        try Swift.withUnsafeBytes(of: v.littleEndian) { try append($0) }
    }

    public func appendUInt64LE(_ v: UInt64) throws {
        try Swift.withUnsafeBytes(of: v.littleEndian) { try append($0) }
    }

    // MARK: Copies out

    /// A copy of `range` in a new secure buffer. Throws `.invalidInput` if out of bounds.
    public func slice(_ range: Range<Int>) throws -> SecureBytes {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw CryptoError.invalidInput("slice \(range) out of bounds 0..<\(count)")
        }
        let result = try SecureBytes(capacity: range.count)
        try result.append(UnsafeRawBufferPointer(start: storage + range.lowerBound,
                                                 count: range.count))
        return result
    }

    /// Explicit declassification: ordinary-memory copy for NON-secret parts (labels, attributes).
    public func unprotectedArray(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count,
                     "SecureBytes range out of bounds")
        return Array(UnsafeRawBufferPointer(start: storage + range.lowerBound, count: range.count))
    }

    /// Explicit declassification, as `unprotectedArray`, straight into a string (labels,
    /// attribute names and values; ill-formed UTF-8 is repaired as `String(decoding:)` does).
    public func unprotectedString(_ range: Range<Int>) -> String {
        precondition(range.lowerBound >= 0 && range.upperBound <= count,
                     "SecureBytes range out of bounds")
        return String(decoding: UnsafeRawBufferPointer(start: storage + range.lowerBound, count: range.count), as: UTF8.self)
    }

    /// Ordinary-memory copy handed to `body`, zeroed afterwards (for handing plaintext to an API
    /// that needs [UInt8], e.g. a D-Bus message). Do not let the array escape.
    public func withUnprotectedCopy<R>(_ body: ([UInt8]) throws -> R) rethrows -> R {
        var copy = unprotectedArray(0..<count)
        defer { wipe(&copy) }
        return try body(copy)
    }

    // MARK: Comparison and clearing

    /// Compares contents in time that depends only on the lengths, not on the bytes.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        let a = storage, b = other.storage
        for i in 0..<count {
            difference |= a.load(fromByteOffset: i, as: UInt8.self)
                ^ b.load(fromByteOffset: i, as: UInt8.self)
        }
        return difference == 0
    }

    /// Sets count to 0, zeroing the bytes.
    public func removeAll() {
        wipe(storage, count)
        count = 0
    }

    /// How many secure buffers this process holds (diagnostics and tests: a count back where it
    /// was shows that every buffer made in between was released, and so wiped).
    package static var liveBuffers: Int { SecureAllocator.shared.liveAllocations }

    // MARK: Raw access for the wrapper modules (libgcrypt here, libdbus in DBusKit)

    /// A secure copy of raw bytes, e.g. straight out of a D-Bus message buffer; for the wrapper
    /// modules only (the package's other modules never hold a raw pointer).
    package convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(capacity: bytes.count)
        try append(bytes)
    }

    /// Removes the first `n` bytes, moving the rest to the front and zeroing the room they leave.
    public func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "SecureBytes removeFirst out of range")
        memmove(storage, storage + n, count - n)
        wipe(storage + count - n, n)
        count -= n
    }

    /// Shortens the buffer to `newCount` bytes, zeroing the removed tail.
    public func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        wipe(storage + newCount, count - newCount)
        count = newCount
    }

    // MARK: Internal access for this module's libgcrypt calls

    /// The bytes in use, valid only inside `body`.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// The bytes in use, writable, valid only inside `body`.
    package func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: storage, count: count))
    }
}

/// Two buffers are equal when their contents are (compared in constant time); the hash covers
/// only the length, so no secret byte ever feeds a hasher.
extension SecureBytes: Hashable {
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool { lhs.constantTimeEquals(rhs) }
    public func hash(into hasher: inout Hasher) { hasher.combine(count) }
}
