/// The fields of `/proc/PID/stat` that tell one process from another: its state and when it
/// started; and the command name it gives itself. Unlike `/proc/PID/exe`, this file is readable
/// for every process of the user, also one that made itself non-dumpable.
///
/// The second field is the command name in parentheses, which the process chooses
/// (`prctl(PR_SET_NAME)`, or its file name) and which may itself hold `)`, spaces and digits;
/// every other field is read from the text after the *last* `)`, so no name can shift them.
public struct ProcessStat: Equatable, Sendable {
    /// The state letter (field 3): `R`, `S`, `D`, `Z` (a zombie: it exited), `X` (dead), …
    public let state: Character
    /// When the process started, in clock ticks since boot (field 22). With the PID, it names
    /// one process for all time: a PID reused later comes with a later start time.
    public let startTime: UInt64
    /// The command name (field 2, at most 15 bytes): the file name it was started from, or what
    /// it set with `prctl(PR_SET_NAME)`. The process chooses it, so it describes, never identifies.
    public let commandName: String

    /// Whether the process has exited (a zombie waiting for its parent, or dead).
    public var hasExited: Bool { state == "Z" || state == "X" }

    /// Reads the text of `/proc/PID/stat`; nil when it does not have the kernel's shape.
    public init?(parsing text: String) {
        guard let close = text.utf8.lastIndex(of: UInt8(ascii: ")")),
              let open = text.utf8.firstIndex(of: UInt8(ascii: "(")), open < close else { return nil }
        let rest = text.utf8[text.utf8.index(after: close)...]
        let fields = rest.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") })
        // After the name come fields 3, 4, …; field 22 is the 20th of them.
        guard fields.count >= 20, fields[0].count == 1, let letter = fields[0].first,
              (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(letter) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter),
              let start = ProcessStat.number(fields[19]) else { return nil }
        state = Character(Unicode.Scalar(letter))
        startTime = start
        commandName = String(decoding: text.utf8[text.utf8.index(after: open)..<close], as: UTF8.self)
    }

    /// A decimal number of ASCII digits only (no sign, no spaces).
    private static func number(_ digits: Substring.UTF8View.SubSequence) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }
}
