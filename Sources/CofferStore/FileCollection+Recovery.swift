import CofferCore

/// What a collection does with bytes at the end of its file that fail verification, and with
/// acknowledged records found missing: report them, and set them aside (see `SetAside`) before
/// the next change cuts them off.
extension FileCollection {
    /// Copies the bytes after the last committed batch aside (durably) before cutting them off,
    /// so that nothing is destroyed, and records that no item id they might hold is used again.
    /// Acknowledged records found missing (see `AcknowledgementMark`) are noted in the same
    /// entry, even when nothing is left of them. With `key`, a meta record then carries the
    /// counters past everything lost; without, the caller writes one (a rewrite of the file).
    func setAsideTornTail(_ s: inout State, key: DataKey?) throws(CofferError) {
        let lost = s.log.lostRecords
        let kind: SetAside.Kind = s.log.tornTailIsUnfinishedWrite ? .unfinishedWrite : .damage
        let torn = s.log.bytes[s.log.validEnd...]
        try SetAside.keep(torn, from: path, at: s.log.validEnd, lostRecords: lost, as: kind, directory: directory)
        if !torn.isEmpty {
            try s.file.truncate(to: s.log.validEnd)
            try s.file.sync()
            s.observedSize = s.log.validEnd
        }
        s.log.dropTornTail()
        if let key {
            // The counters move past the tail; the label and the access rules stay as they were.
            try append(try metaRecord(label: s.log.label, access: try access(in: &s, key: key), in: s, key: key), to: &s)
        }
        let target = SetAside.path(of: path, kind)
        if lost > 0 {
            warn("\(Self.lossText(lost, path: path))"
                 + (torn.isEmpty ? "; noted in \(target)" : "; moved the \(torn.count) bytes at the end of the file that failed verification to \(target)")
                 + "; no item id \(lost == 1 ? "it" : "they") held will be used again; restore what is missing from a backup")
            return
        }
        warn("\(path): moved \(torn.count) bytes at the end of the file that failed verification to \(target)"
             + (kind == .damage ? " (damage: up to \(torn.count / RecordFrame.minimumLength + 1) records of committed changes are lost)"
                                : " (an unfinished write that was never acknowledged)"))
    }

    /// "1 acknowledged record is" / "N acknowledged records are".
    static func lostRecordsText(_ lost: UInt64) -> String {
        lost == 1 ? "1 acknowledged record is" : "\(lost) acknowledged records are"
    }

    /// What the log line says first of `lost` acknowledged records missing from `path`.
    private static func lossText(_ lost: UInt64, path: String) -> String {
        "\(path): \(lostRecordsText(lost)) missing from the end of the file (damage, not a crash: \(lost == 1 ? "it had" : "they had") been written and acknowledged)"
    }

    static func tornTailWarning(_ log: CollectionLog, path: String) -> String {
        let quarantine = SetAside.path(of: path, .damage)
        if log.lostRecords > 0 {
            return lossText(log.lostRecords, path: path)
                + (log.tornBytes > 0 ? "; the \(log.tornBytes) bytes at the end of the file that fail verification will be moved to \(quarantine) on the next change"
                                     : "; the next change notes the loss in \(quarantine)")
                + "; restore what is missing from a backup"
        }
        if log.tornTailIsUnfinishedWrite {
            return "\(path): ignoring \(log.tornBytes) bytes of an unfinished write at the end; they will be set aside on the next change"
        }
        return "\(path): \(log.tornBytes) bytes at the end of the file fail verification (damage: up to \(log.tornBytes / RecordFrame.minimumLength + 1) records of committed changes are unreadable); they will be moved to \(quarantine) on the next change"
    }

    /// What `CollectionInfo.recovery` says: damage set aside earlier, or found now.
    func recovery(of log: CollectionLog) -> String? {
        Self.recovery(of: log, path: path)
    }

    /// What `CollectionInfo.recovery` says of the file at `path` read as `log`.
    static func recovery(of log: CollectionLog, path: String) -> String? {
        if let report = SetAside.report(for: path) { return report }
        if log.lostRecords > 0 {
            return "damaged: \(lostRecordsText(log.lostRecords)) missing from the end of the file; the next change sets what is left of them aside"
        }
        guard log.tornBytes > 0, !log.tornTailIsUnfinishedWrite else { return nil }
        return "damaged: \(log.tornBytes) bytes at the end of the file fail verification; they will be set aside on the next change"
    }
}
