import CofferCore
import CofferStore

/// Finding 6: each collection's state, and where the `default` alias points. Lock states come
/// from cofferd when it serves the store; damage from the files (read without a password and
/// without changing anything), and recovery from cofferd's report as well when it serves the
/// collection (it knows its own data directory, and what it found in the file).
enum CollectionsCheck {
    /// - daemon: the running cofferd's keychain, when it serves `store`.
    static func findings(store: StoreCheck.Location, storeReadable: Bool, daemon: DaemonKeychain?) -> [Finding] {
        var findings: [Finding] = []
        var fileIDs: [CollectionID] = []
        if storeReadable {
            do {
                fileIDs = try FileStore.collectionIDs(in: store.directory)
            } catch {
                findings.append(Finding("collection", .problem, CLIError.from(error).message,
                                        fix: "check the permissions of \(store.directory)"))
            }
        }
        let daemonIDs = (try? daemon?.collectionIDs()) ?? []
        let ids = fileIDs + daemonIDs.filter { !fileIDs.contains($0) }
        guard storeReadable || daemon != nil else { return findings }
        guard !ids.isEmpty else {
            findings.append(Finding("collection", .warning, "there is no collection: applications cannot store passwords yet",
                                    fix: "coffer create-collection login"))
            return findings
        }
        let aliases = (try? daemon?.aliases()) ?? (try? FileStore.inspectAliases(directory: store.directory)) ?? [:]
        let defaultTarget = aliases[Keychain.defaultAlias] ?? (ids.contains(.login) ? .login : nil)
        for id in ids {
            let named = aliases.filter { $0.value == id }.map(\.key).sorted()
            let suffix = named.isEmpty ? "" : " (alias \(named.joined(separator: ", ")))"
            findings.append(finding(for: id, in: store.directory, onFile: fileIDs.contains(id), daemon: daemon, suffix: suffix))
        }
        if let defaultTarget, ids.contains(defaultTarget) {
            findings.append(Finding("default", .ok, "applications that name no collection store in '\(defaultTarget)'"
                                    + (aliases[Keychain.defaultAlias] == nil ? " (there is no 'default' alias; 'login' is used)" : "")))
        } else {
            findings.append(Finding("default", .warning,
                                    "no collection is the default, so applications that name none (secret-tool store, most browsers) fail to store",
                                    fix: "coffer alias set default \(ids.first { $0 != .session }?.rawValue ?? "login"), or coffer create-collection login"))
        }
        return findings
    }

    private static func finding(for id: CollectionID, in directory: String, onFile: Bool, daemon: DaemonKeychain?,
                                suffix: String) -> Finding {
        let inDaemon = try? daemon?.info(id)
        let lockedInDaemon = inDaemon?.isLocked
        guard onFile else {
            let state = lockedInDaemon.map { $0 ? "locked" : "unlocked" } ?? "listed by the Secret Service"
            return recoveryFinding(for: id, "'\(id)' is \(state), kept in memory only by cofferd\(suffix)", recovery: inDaemon?.recovery)
        }
        let info: CollectionInfo
        do {
            info = try FileStore.inspect(directory: directory, id: id)
        } catch .storeCorrupt(let file, let reason) {
            return Finding("collection", .problem,
                           "'\(id)' is damaged: \(file) \(reason); it is left untouched and cannot be opened",
                           fix: file.hasSuffix(".keys")
                               ? "its key slots are every way into the collection: put back the \(id).keys saved with this \(id).coffer (a copy of the data directory), or restore the collection from a backup (coffer import backup FILE)"
                               : "restore it from a backup (coffer import backup FILE), or move it aside to start afresh: mv \(shellQuoted(file)) \(shellQuoted(file + ".damaged"))")
        } catch {
            return Finding("collection", .problem, "'\(id)': \(CLIError.from(error).message)",
                           fix: "check the permissions of \(directory)")
        }
        let state = lockedInDaemon.map { $0 ? "locked" : "unlocked in cofferd" } ?? "locked (no cofferd serves it)"
        let summary = "'\(id)' is \(state), \(info.itemCount) item\(info.itemCount == 1 ? "" : "s")\(suffix)"
        return recoveryFinding(for: id, summary, recovery: inDaemon?.recovery ?? info.recovery)
    }

    /// `summary` as it is, or with `recovery` as a warning when there is one.
    private static func recoveryFinding(for id: CollectionID, _ summary: String, recovery: String?) -> Finding {
        guard let recovery else { return Finding("collection", .ok, summary) }
        return Finding("collection", .warning, "\(summary); \(recovery)",
                       fix: "check its items (coffer search --all --collection \(id)) and restore what is missing from a backup; the set-aside bytes stay encrypted beside it")
    }
}
