import CofferCore
import SystemKit

/// Where bytes that fail verification go before a collection file is ever cut short: they are
/// copied, durably, into a file beside the collection, so that nothing is destroyed.
///
/// - `<id>.coffer.quarantine` holds damage: bytes inside what had been committed (a flipped
///   byte in the last record, garbage over the end of the file, what is left of acknowledged
///   records whose end was zeroed or cut off). Records in it may have been acknowledged
///   writes; while it exists the collection is reported "recovered with losses".
/// - `<id>.coffer.unfinished` holds what a crash left of a write that was never acknowledged
///   (records of an uncommitted batch, a record cut short). Nothing acknowledged is in it.
///
/// Both are append-only. Each entry is a line `coffer set-aside: <unix time> offset <n>
/// length <n>`, followed by ` lost <n>` when that many acknowledged records were found
/// missing (see `AcknowledgementMark`; the bytes are then what is left of them, maybe none),
/// then the bytes as they were (still encrypted) and a newline.
enum SetAside {
    enum Kind {
        case damage
        case unfinishedWrite
    }

    static func path(of store: String, _ kind: Kind) -> String {
        switch kind {
        case .damage: store + ".quarantine"
        case .unfinishedWrite: store + ".unfinished"
        }
    }

    /// Appends `bytes` (found at `offset` of `store`) to the file for `kind` and makes that
    /// durable (file and directory) before returning.
    static func keep(_ bytes: ArraySlice<UInt8>, from store: String, at offset: Int, lostRecords: UInt64 = 0, as kind: Kind,
                     directory: String) throws(CofferError) {
        let target = path(of: store, kind)
        let file = try PosixFile(path: target, create: true)
        let end = try file.status().size
        let lost = lostRecords > 0 ? " lost \(lostRecords)" : ""
        let entry = Array("coffer set-aside: \(Clock.now()) offset \(offset) length \(bytes.count)\(lost)\n".utf8) + bytes + [0x0A]
        try file.write(entry, at: end)
        try file.sync()
        try PosixFile.syncDirectory(directory)
    }

    /// What `coffer collections` says of a collection whose damage was set aside, or nil.
    static func report(for store: String) -> String? {
        let quarantine = path(of: store, .damage)
        guard FileSystem.exists(quarantine) else { return nil }
        return "recovered with losses: what was left of damaged records is kept in \(quarantine)"
    }
}
