#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Zeroes `count` bytes at `pointer` with `explicit_bzero`, which the optimiser may not elide.
/// (For the wrapper modules: DBusKit wipes a secret in a message's buffer once copied out.)
@inline(__always)
package func wipe(_ pointer: UnsafeMutableRawPointer?, _ count: Int) {
    guard let pointer, count > 0 else { return }
    explicit_bzero(pointer, count)
}

/// Zeroes the elements of `array` in place (its length is kept).
///
/// Only the storage `array` refers to is wiped: other copies of the array sharing storage are
/// copied first by Swift's copy-on-write and keep their bytes.
public func wipe(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { wipe($0.baseAddress, $0.count) }
}
