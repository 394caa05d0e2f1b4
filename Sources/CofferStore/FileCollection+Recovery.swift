import CofferCore

/// What a collection does with bytes at the end of its file that fail verification: report
/// them, and set them aside (see `SetAside`) before the next change cuts them off.
extension FileCollection {
    /// Copies the bytes after the last committed batch aside (durably) before cutting them off,
    /// so that nothing is destroyed, and records that no item id they might hold is used again.
    func setAsideTornTail(_ s: inout State) throws(CofferError) {
        let kind: SetAside.Kind = s.log.tornTailIsUnfinishedWrite ? .unfinishedWrite : .damage
        let torn = s.log.bytes[s.log.validEnd...]
        try SetAside.keep(torn, from: path, at: s.log.validEnd, as: kind, directory: directory)
        try s.file.truncate(to: s.log.validEnd)
        try s.file.sync()
        s.log.dropTornTail()
        s.observedSize = s.log.validEnd
        if s.dataKey != nil {
            // The counters move past the tail; the label and the access rules stay as they were.
            try append(try metaRecord(label: s.log.label, access: try access(in: &s), in: s), to: &s)
        }
        warn("\(path): moved \(torn.count) bytes at the end of the file that failed verification to \(SetAside.path(of: path, kind))"
             + (kind == .damage ? " (damage: up to \(torn.count / RecordFrame.minimumLength + 1) records of committed changes are lost)"
                                : " (an unfinished write that was never acknowledged)"))
    }

    static func tornTailWarning(_ log: CollectionLog, path: String) -> String {
        if log.tornTailIsUnfinishedWrite {
            return "\(path): ignoring \(log.tornBytes) bytes of an unfinished write at the end; they will be set aside on the next change"
        }
        return "\(path): \(log.tornBytes) bytes at the end of the file fail verification (damage: up to \(log.tornBytes / RecordFrame.minimumLength + 1) records of committed changes are unreadable); they will be moved to \(SetAside.path(of: path, .damage)) on the next change"
    }

    /// What `CollectionInfo.recovery` says: damage set aside earlier, or found now.
    func recovery(of log: CollectionLog) -> String? {
        Self.recovery(of: log, path: path)
    }

    /// What `CollectionInfo.recovery` says of the file at `path` read as `log`.
    static func recovery(of log: CollectionLog, path: String) -> String? {
        if let report = SetAside.report(for: path) { return report }
        guard log.tornBytes > 0, !log.tornTailIsUnfinishedWrite else { return nil }
        return "damaged: \(log.tornBytes) bytes at the end of the file fail verification; they will be set aside on the next change"
    }
}
