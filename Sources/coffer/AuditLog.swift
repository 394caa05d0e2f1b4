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
        the item, and why. The log never holds a secret.

        This command prints the events oldest first, one a line, in local time. It reads the \
        files itself: cofferd need not be running and no password is asked.

        OUTPUT
          Columns: TIME, APPLICATION, ACTION, OUTCOME, COLLECTION, LABEL (the
          item's, or the collection's for an event on a whole collection; #ID
          when there is none) and DETAIL (why or how: "creator", "strict
          policy", "wrong password" ...); "-" where an event has no value.
          ACTION is one of read, write, delete, unlock, lock, grant, revoke,
          policy, portal. OUTCOME is ok (done or allowed), denied (refused by a
          policy or by you) or failed (a wrong password, a locked collection,
          an error).

          With --json, an array of objects {"time", "action", "outcome",
          "app", "collection", "item", "label", "detail"} (time in seconds
          since 1970, UTC; app as flatpak:APP-ID, snap:NAME or exe:/PATH;
          null where there is no value); [] when no event matches.

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

    func validate() throws {
        if let last, last < 0 { throw ValidationError("--last wants a number of events (0 or more)") }
        if let since, LocalTime.moment(since, now: Clock.now()) == nil {
            throw ValidationError("--since wants \(LocalTime.sinceRule), got '\(Encode.display(since))'")
        }
    }

    func run() throws {
        let directory = global.storeDirectory
        let contents = try AuditLogFile.read(directory: directory)
        if contents.skippedLines > 0 {
            Output.note("warning: \(contents.skippedLines) line\(contents.skippedLines == 1 ? "" : "s") of the audit log could not be read (cut short by a crash, or damaged) and \(contents.skippedLines == 1 ? "was" : "were") skipped")
        }
        let filter = try AuditLogFilter(collection: collectionOption.name(or: nil), application: application,
                                        since: since.flatMap { LocalTime.moment($0, now: Clock.now()) }, deniedOnly: denied,
                                        aliases: (try? FileStore.inspectAliases(directory: directory)) ?? [:])
        var events = contents.events.filter(filter.matches)
        if let last { events = Array(events.suffix(last)) }

        if json {
            Output.write(Self.json(events))
        } else if !contents.exists {
            Output.note("no audit log yet in \(directory): nothing has been recorded there")
        } else if events.isEmpty {
            Output.note(filter.isEmpty && last != 0 ? "the audit log is empty" : "no event matches")
        } else {
            Self.table(events).forEach(Output.line)
        }
    }

    private static func json(_ events: [AuditEvent]) -> [UInt8] {
        var out: [UInt8] = Array("[".utf8)
        for (index, event) in events.enumerated() {
            out.append(contentsOf: Array((index == 0 ? "\n  " : ",\n  ").utf8))
            out.append(contentsOf: AuditLogRecord.json(event, absentAsNull: true))
        }
        out.append(contentsOf: Array((events.isEmpty ? "]\n" : "\n]\n").utf8))
        return out
    }

    /// Aligned columns; the detail (free text) comes last.
    private static func table(_ events: [AuditEvent]) -> [String] {
        let rows = [["TIME", "APPLICATION", "ACTION", "OUTCOME", "COLLECTION", "LABEL", "DETAIL"]] + events.map { event in
            [LocalTime.format(secondsSince1970: event.time),
             event.application.map { Encode.display($0.description) } ?? "-",
             event.action.rawValue, event.outcome.rawValue,
             event.collection?.rawValue ?? "-",
             event.label.map(Encode.display) ?? event.item.map { "#\($0)" } ?? "-",
             event.detail.map(Encode.display) ?? "-"]
        }
        return TextTable.lines(rows)
    }
}

/// The collections `coffer log --collection` takes.
enum LoggedCollection: CollectionRole {
    static let help = "Only events of this collection (an id, or an alias for the collection it names now). Default: every collection."
}
