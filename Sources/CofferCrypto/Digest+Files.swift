import CGcrypt
import SystemKit

extension Digest {
    /// SHA-256 of everything `file` holds from where it is positioned to end of file, read
    /// 64 KiB at a time: for files too large to hold in memory at once, such as programs.
    public static func sha256(readingToEndOf file: FileDescriptor) throws -> [UInt8] {
        Crypto.ensureInitialized()
        var handle: gcry_md_hd_t?
        let err = gcry_md_open(&handle, COFFER_GCRY_MD_SHA256, 0)
        guard err == 0, let handle else { throw gcryError(err, "gcry_md_open") }
        defer { gcry_md_close(handle) }
        while true {
            let chunk = try file.read(upTo: 65536)
            if chunk.isEmpty { break }
            gcry_md_write(handle, chunk, chunk.count)
        }
        guard let digest = gcry_md_read(handle, COFFER_GCRY_MD_SHA256) else {
            throw CryptoError.invalidInput("libgcrypt gave no digest")
        }
        return Array(UnsafeRawBufferPointer(start: digest, count: 32))
    }
}
