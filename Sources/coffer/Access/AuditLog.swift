import ArgumentParser
import CofferCore
import CofferStore

/// `coffer log`: the audit log, read from the store directory's files.
struct AuditLog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the audit log: which programs read or changed which secrets, and when.",
        discussion: """
        Coffer keeps an audit log: one line for every secret a program reads or is refused, \
        and for every item or collection created, changed or deleted, every unlock and lock, \
        and every access a program is given or refused. Each event says when it happened, \
        which program asked (the path of its executable, or the app id of a Flatpak app or \
        the name of a snap), what it did, how that ended, in which collection, the label of \
        the item, and why. The log never holds a secret, and it keeps labels sealed: each is \
        encrypted to a key of its collection, so that whoever copies the store directory \
        learns no more from the log than from the collection's file. They show as (sealed) \
        unless --unseal is given, which asks the password of each collection whose labels \
        the events shown hold (one line of stdin each, in the order of their ids, with \
        --password-stdin).

        This command prints the events as they were written (oldest first), one a line, in \
        local time. It reads the files itself, a piece at a time however large they are: \
        cofferd need not be running and no password is asked. Refusals of one application \
        (an action on a collection) within a minute of its first are written as one line \
        that says how many more came.

        OUTPUT
          Columns: TIME, APPLICATION, ACTION, OUTCOME, COLLECTION, LABEL (the
          item's, or the collection's for an event on a whole collection;
          (sealed) until --unseal; #ID when there is none) and DETAIL (why or how: "creator", "strict
          policy", "wrong password" ...); "-" where an event has no value.
          ACTION is one of read, write, delete, unlock, lock, grant, revoke,
          policy, portal, keys (a key slot added or removed, a password
          recovered). OUTCOME is ok (done or allowed), denied (refused by a
          policy or by you) or failed (a wrong password, a locked collection,
          an error).

          With --json, an array of objects {"time", "action", "outcome",
          "app", "collection", "item", "label", "sealed", "detail",
          "repeated"} (time in seconds since 1970, UTC; app as flatpak:APP-ID,
          snap:NAME or exe:/PATH; label: the label, when it is open; sealed:
          the sealed label in hex, when it is not; repeated: on a line that
          sums up refusals, how many more came; null where there is no value);
          [] when no event matches.

        THE FILES
          audit.log in the store directory (--data-dir, else $COFFER_DATA_DIR,
          else $XDG_DATA_HOME/coffer, else ~/.local/share/coffer), readable by
          you alone (mode 0600), one JSON object a line. The log is bounded:
          when audit.log reaches 1 MiB (some thousands of events) it becomes
          audit.log.1, the previous audit.log.1 becomes audit.log.2 and the
          one before is deleted, so the log never takes much more than 3 MiB
          and the oldest events go first. cofferd writes to it, and so does
          coffer when it works on the files itself. Deleting the files
          empties the log.

        EXAMPLES
          The last 20 events:
            coffer log --last 20
          What was refused in the last two days:
            coffer log --denied --since 2d
          What secret-tool did in the login collection:
            coffer log --app secret-tool --collection login
          Everything since a date, for a script:
            coffer log --since 2026-11-23 --json
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var collectionOption: CollectionOption<LoggedCollection>

    @Option(name: .customLong("app"),
            help: ArgumentHelp("Only events of this application: its exact name (exe:/usr/bin/secret-tool, flatpak:org.example.App, snap:NAME) or any part of its path or app id (secret-tool).",
                               valueName: "app"))
    var application: String?

    @Option(help: ArgumentHelp("Only events since this time: \(LocalTime.sinceRule).", valueName: "when"))
    var since: String?

    @Option(name: [.customShort("n"), .customLong("last")], help: ArgumentHelp("Only the last <n> events (after the other filters).", valueName: "n"))
    var last: Int?

    @Flag(help: "Only refusals (outcome 'denied').")
    var denied = false

    @Flag(help: "Print the events as a JSON array.")
    var json = false

    @Flag(help: "Show the labels: asks the password of each collection whose labels the events shown keep sealed.")
    var unseal = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if let last, last < 0 { throw ValidationError("--last wants a number of events (0 or more)") }
        if let since, LocalTime.moment(since, now: Clock.now()) == nil {
            throw ValidationError("--since wants \(LocalTime.sinceRule), got '\(Encode.display(since))'")
        }
    }

    func run() throws {
        let directory = global.storeDirectory
        let filter = try AuditLogFilter(collection: collectionOption.name(or: nil), application: application,
                                        since: since.flatMap { LocalTime.moment($0, now: Clock.now()) }, deniedOnly: denied,
                                        aliases: (try? FileStore.inspectAliases(directory: directory)) ?? [:])
        // The log may be large: it is read once, as it is printed, never whole. With --last,
        // only the last events that match are kept until the end.
        var labels = unseal ? try AuditLabels(unsealing: try sealedCollections(directory, filter), global: global, passwords: passwords)
            : AuditLabels()
        var table = Table(json: json)
        var kept = last.map { LastElements<AuditEvent>(capacity: $0) }
        let scan = try AuditLogFile.scan(directory: directory) { event in
            guard filter.matches(event) else { return }
            if kept == nil { table.add(labels.open(event)) } else { kept?.append(event) }
        }
        kept?.elements.forEach { table.add(labels.open($0)) }
        if scan.skippedLines > 0 {
            Output.note("warning: \(scan.skippedLines) line\(scan.skippedLines == 1 ? "" : "s") of the audit log could not be read (cut short by a crash, or damaged) and \(scan.skippedLines == 1 ? "was" : "were") skipped")
        }
        if !json {
            guard scan.exists else { return Output.note("no audit log yet in \(directory): nothing has been recorded there") }
            guard table.printed + table.pending > 0 else {
                return Output.note(filter.isEmpty && last != 0 ? "the audit log is empty" : "no event matches")
            }
        }
        table.finish()
        if !labels.stillSealed.isEmpty && !unseal {
            let names = labels.stillSealed.map { "'\($0)'" }.sorted().joined(separator: ", ")
            Output.note("the labels of \(names) are sealed in the log; to see them, give the password\(labels.stillSealed.count == 1 ? "" : "s"): coffer log --unseal")
        }
    }

    /// The collections whose labels the events that match keep sealed (a first pass, for
    /// --unseal to ask only the passwords it needs).
    private func sealedCollections(_ directory: String, _ filter: AuditLogFilter) throws -> [CollectionID] {
        var found: Set<CollectionID> = []
        _ = try AuditLogFile.scan(directory: directory) { event in
            guard event.sealedLabel != nil, let collection = event.collection, filter.matches(event) else { return }
            found.insert(collection)
        }
        return found.sorted { $0.rawValue < $1.rawValue }
    }

    /// The events printed as they come: JSON objects at once; table rows a block at a time,
    /// aligned to the widest cells seen so far (a block of rows is measured before it is
    /// printed, and columns never narrow). Output is written 64 KiB at a time.
    private struct Table {
        let json: Bool
        private(set) var printed = 0
        private var rows: [[String]] = []
        private var widths = TextTable.Widths()
        private var out: [UInt8] = []
        var pending: Int { rows.count }

        /// How many rows are measured together.
        static let block = 4096

        init(json: Bool) {
            self.json = json
            widths.measure(AuditLog.header)
        }

        mutating func add(_ event: AuditEvent) {
            guard json else {
                rows.append(AuditLog.row(event))
                if rows.count == Self.block { printRows() }
                return
            }
            out += (printed == 0 ? "[\n  " : ",\n  ").utf8
            out += AuditLogRecord.json(event, absentAsNull: true)
            printed += 1
            if out.count >= 1 << 16 { flush() }
        }

        private mutating func printRows() {
            rows.forEach { widths.measure($0) }
            if printed == 0 { widths.append(AuditLog.header, newline: true, to: &out) }
            for row in rows {
                widths.append(row, newline: true, to: &out)
                if out.count >= 1 << 16 { flush() }
            }
            printed += rows.count
            rows.removeAll(keepingCapacity: true)
        }

        private mutating func flush() {
            Output.write(out)
            out.removeAll(keepingCapacity: true)
        }

        /// Prints what is left (and closes the JSON array).
        mutating func finish() {
            if json {
                out += (printed == 0 ? "[]\n" : "\n]\n").utf8
            } else if !rows.isEmpty {
                printRows()
            }
            flush()
        }
    }

    private static let header = ["TIME", "APPLICATION", "ACTION", "OUTCOME", "COLLECTION", "LABEL", "DETAIL"]

    /// One event's cells; the detail (free text) comes last.
    private static func row(_ event: AuditEvent) -> [String] {
        [LocalTime.format(secondsSince1970: event.time),
         event.application.map { Encode.display($0.description) } ?? "-",
         event.action.rawValue, event.outcome.rawValue,
         event.collection?.rawValue ?? "-",
         event.label.map(Encode.display) ?? (event.sealedLabel == nil ? nil : "(sealed)") ?? event.item.map { "#\($0)" } ?? "-",
         event.detail.map(Encode.display) ?? "-"]
    }
}

/// The collections `coffer log --collection` takes.
enum LoggedCollection: CollectionRole {
    static let help = "Only events of this collection (an id, or an alias for the collection it names now). Default: every collection."
}
