import CofferCore
import SystemKit

/// This device's own file when it is not as this device left it: missing (removed, or a folder
/// put back without it), without a header, damaged, or longer than its last whole record (a
/// write cut short by a crash, or bytes someone appended). It is made anew, never built on:
/// what was there is set aside beside it (`<name>.set-aside-<time>`, which no device reads),
/// the records that still open are written again in a new generation, and a `merged` record
/// carries its sequences on from the highest ever written, so that the others read it from its
/// start and take none of it for a file that went back.
extension CollectionSync {
    /// Why this device's own file must be made anew; nil when it is as this device left it.
    func ownFileNeedsRemaking(_ s: Session) throws(CofferError) -> String? {
        let own = s.state.device
        if let why = s.folder.damaged[own] { return "it was damaged (\(why))" }
        guard let position = s.folder.positions[own] else {
            return try PosixFile.identity(of: ownFile(s).path) == nil ? "it was missing" : "it had no header"
        }
        guard let (_, size) = try PosixFile.identity(of: ownFile(s).path) else { return "it was missing" }
        if size < position.end { return "it was shorter than this device wrote it (an older copy put back, or someone cut it)" }
        return size > position.end ? "\(size - position.end) bytes followed its last whole record (a write cut short, or someone else's)"
                                   : nil
    }

    /// Sets the own file aside (when there is one) and writes it anew.
    func remakeOwnFile(_ s: inout Session, because why: String) throws(CofferError) {
        let own = s.state.device
        let old = ownFile(s)
        let kept = (try? old.read(keys: s.keys).records) ?? []
        let generation = max(UInt32(clamping: Clock.now()), (s.folder.positions[own]?.generation ?? 0) &+ 1,
                             (s.state.floors[own]?.generation ?? 0) &+ 1)
        let next = max(s.folder.positions[own]?.nextSequence ?? 0, s.state.floors[own]?.nextSequence ?? 0,
                       (kept.last?.sequence).map { $0 + 1 } ?? 0)
        let aside = try PosixFile.identity(of: old.path) == nil ? nil : "\(old.path).set-aside-\(Clock.now())"
        if let aside { try PosixFile.rename(old.path, to: aside) }
        let counts = s.folder.positions.filter { $0.key != own }.mapValues(\.seen)
        try SyncDeviceFile(folder: s.state.folder, collection: s.state.uuid, device: own, generation: generation)
            .rewrite(kept + [(next, .merged(counts))], keys: s.keys)
        s.folder.forget(own)
        // What the file now holds of this device's history, as far as the state is concerned:
        // this device made it so (it is not a store put back from a backup).
        s.state.floors[own] = SyncState.Floor(generation: generation, nextSequence: next + 1)
        // Versions of this store's items the new file may lack go out again at the next export.
        for (local, entry) in s.state.entries where entry.version.device == own { s.state.entries[local]?.digest = [] }
        s.offsets = [:]
        s.notices.append("this device's sync file was made anew: \(why)" + (aside.map { "; what it held is kept as \($0)" } ?? ""))
    }

    private func ownFile(_ s: Session) -> SyncDeviceFile {
        SyncDeviceFile(folder: s.state.folder, collection: s.state.uuid, device: s.state.device)
    }
}
