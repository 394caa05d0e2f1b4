import CofferStore
import SystemKit

/// Finding 5: the store directory (the one in use: --data-dir, else the serving cofferd's,
/// else the default) exists, belongs to the user, and is 0700 with files 0600.
enum StoreCheck {
    /// Which store the checks look at, and why that one.
    struct Location {
        let directory: String
        /// "given with --data-dir", "cofferd's", "the default" ...
        let source: String
    }

    /// --data-dir; else the directory of the cofferd serving the bus (as it tells, else as /proc
    /// shows: its --data-dir, else the default its environment gives); else the default for
    /// this environment.
    static func location(dataDir: String?, bus: BusState, session: SessionPaths) -> Location {
        if let dataDir { return Location(directory: dataDir, source: "given with --data-dir") }
        if let daemon = bus.cofferd?.daemon {
            return Location(directory: daemon.dataDirectory, source: "the store of the running cofferd")
        }
        if let process = bus.cofferd?.process, let environment = process.environment {
            let directory = process.option("data-dir").map(process.absolute) ?? FileStore.defaultDirectory(environment: environment)
            return Location(directory: directory, source: "the store of the running cofferd")
        }
        return Location(directory: FileStore.defaultDirectory(environment: session.environment), source: "the default store")
    }

    /// The directory's findings (one, or two when its files need fixing too). The second
    /// value says whether there is a directory to read collections from.
    static func findings(_ location: Location) -> (findings: [Finding], readable: Bool) {
        let directory = location.directory
        let status: FileStatus
        do {
            status = try FileStatus.of(directory)
        } catch {
            guard error != .noSuchFile else {
                return ([Finding("store", .warning, "\(directory) (\(location.source)) does not exist yet: there is no collection",
                                 fix: "create the first collection (the store is made with it): coffer create-collection login")], false)
            }
            return ([Finding("store", .problem, "cannot look at \(directory) (\(location.source)): \(error)",
                             fix: "check the permissions of its parent directories")], false)
        }
        guard status.kind == .directory else {
            return ([Finding("store", .problem, "\(directory) (\(location.source)) is not a directory",
                             fix: "move it aside: mv \(shellQuoted(directory)) \(shellQuoted(directory + ".old"))")], false)
        }
        var findings: [Finding] = []
        let user = ProcessControl.userID
        if status.owner != user {
            findings.append(Finding("store", .problem, "\(directory) (\(location.source)) belongs to user id \(status.owner), not to you (\(user))",
                                    fix: "sudo chown -R \(user) \(shellQuoted(directory))"))
        } else if status.permissions != 0o700 {
            findings.append(Finding("store", .problem,
                                    "\(directory) (\(location.source)) is mode \(octal(status.permissions)), so others can \(status.permissions & 0o044 != 0 ? "list" : "reach") what is in it (it must be 0700)",
                                    fix: "chmod 700 \(shellQuoted(directory))"))
        }
        let names = SessionPaths.names(in: directory)
        var open: [String] = [], foreign: [String] = [], files = 0
        for name in names {
            guard let file = try? FileStatus.of(directory + "/" + name), file.kind == .regular else { continue }
            files += 1
            if file.owner != user { foreign.append(name) } else if file.permissions & 0o077 != 0 { open.append(name) }
        }
        if !foreign.isEmpty {
            findings.append(Finding("store", .problem, "files in \(directory) belong to another user: \(foreign.joined(separator: ", "))",
                                    fix: "sudo chown \(user) " + foreign.map { shellQuoted(directory + "/" + $0) }.joined(separator: " ")))
        }
        if !open.isEmpty {
            findings.append(Finding("store", .problem, "files in \(directory) that others may read (they must be 0600): \(open.joined(separator: ", "))",
                                    fix: "chmod 600 " + open.map { shellQuoted(directory + "/" + $0) }.joined(separator: " ")))
        }
        if findings.isEmpty {
            findings.append(Finding("store", .ok, "\(directory) (\(location.source)) is yours, mode 0700" + (files == 0 ? " (empty)" : ", its \(files) files 0600")))
        }
        return (findings, true)
    }

    static func octal(_ permissions: UInt32) -> String {
        "0" + String(permissions, radix: 8)
    }
}
