import CofferCore
import CofferStore
import SystemKit

/// Finding 7: each synced collection's syncing — its folder there and writable, no machines
/// sharing one id, and what the running cofferd's last rounds found wrong (damaged device
/// files, a full disk), when it serves this store.
enum SyncCheck {
    static func findings(store: StoreCheck.Location, storeReadable: Bool, bus: BusState) -> [Finding] {
        guard storeReadable else { return [] }
        let served = bus.cofferd?.daemon?.dataDirectory == store.directory
        let reported = served ? bus.cofferd?.syncProblems ?? [:] : [:]
        var findings: [Finding] = []
        for id in (try? FileStore.collectionIDs(in: store.directory)) ?? [] {
            let state: SyncState
            do {
                guard let peeked = try SyncState.peek(directory: store.directory, id: id) else { continue }
                state = peeked
            } catch {
                findings.append(Finding("sync", .problem, "collection '\(id)': \(CLIError.from(error).message)",
                                        fix: "move it aside (the collection's items stay); then join the folder again: coffer sync join FOLDER --collection \(id)"))
                continue
            }
            let problems = folderFindings(id, state) + (reported[id.rawValue] ?? []).map { problem in
                Finding("sync", .problem, "collection '\(id)': \(problem)",
                        fix: "a damaged file is another machine's: run coffer doctor there; a full or unreadable disk here: free space or fix permissions, and syncing resumes by itself")
            }
            findings += problems
            if problems.isEmpty {
                let others = SyncFolder.deviceFiles(in: state.folder).filter { $0.device != state.device }.count
                findings.append(Finding("sync", .ok, "collection '\(id)' syncs through \(state.folder) with \(others) other machine(s)"
                                        + (served ? "" : " (no cofferd serves this store to say how its last sync went)")))
            }
        }
        return findings
    }

    private static func folderFindings(_ id: CollectionID, _ state: SyncState) -> [Finding] {
        guard let status = try? FileStatus.of(state.folder), status.kind == .directory else {
            return [Finding("sync", .problem, "collection '\(id)': its sync folder \(state.folder) is missing, so it does not sync (its items are all still here)",
                            fix: "bring the folder back (is the sync tool's shared folder mounted, or moved?), or join the folder at its new place")]
        }
        guard FileSystem.isWritableDirectory(state.folder) else {
            return [Finding("sync", .problem, "collection '\(id)': its sync folder \(state.folder) cannot be written, so this machine's changes stay here",
                            fix: "chmod u+rwx \(shellQuoted(state.folder))")]
        }
        return SyncFolder.conflictingCopies(in: state.folder).map { copy in
            Finding("sync", .problem,
                    "collection '\(id)': \(copy) is a conflicting copy of a machine's file: two machines write under one id (one restored from the other's backup?); the changes of both are merged, but the sync tool will keep making such copies",
                    fix: "on the machine that was restored, move \(id).sync in its store aside and join again (coffer sync join \(shellQuoted(state.folder)) --collection \(id)); then remove the copy")
        }
    }
}
