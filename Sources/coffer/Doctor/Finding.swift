/// One thing `coffer doctor` looked at: how it stands, what was found (one line), and, when it
/// is not ok, what to do about it.
struct Finding {
    enum Status: String {
        /// Nothing to do.
        case ok
        /// Works now, but worth knowing or fixing; does not change the exit status.
        case warning
        /// Something is wrong: `coffer doctor` exits with `ExitStatus.problemFound`.
        case problem
    }

    /// Which check: bus, activation, portal, autostart, units, store, collection, pinentry,
    /// access, unit.
    let check: String
    let status: Status
    let finding: String
    let fix: String?

    init(_ check: String, _ status: Status, _ finding: String, fix: String? = nil) {
        self.check = check
        self.status = status
        self.finding = finding
        self.fix = fix
    }

    /// `ok       bus: …` (status padded so that the checks line up), then `; fix: …`. Text
    /// from files and other programs is escaped so that it cannot drive the terminal.
    var line: String {
        let padded = status.rawValue + String(repeating: " ", count: max(1, 9 - status.rawValue.count))
        return padded + check + ": " + Encode.display(finding) + (fix.map { "; fix: " + Encode.display($0) } ?? "")
    }

    /// The findings as a JSON array of objects {"check", "status", "finding", "fix"} ("fix"
    /// only when there is one).
    static func json(_ findings: [Finding]) -> [UInt8] {
        var out: [UInt8] = Array("[".utf8)
        for (index, finding) in findings.enumerated() {
            out.append(contentsOf: Array((index == 0 ? "\n  {\"check\": " : ",\n  {\"check\": ").utf8))
            Encode.jsonString(finding.check, to: &out)
            out.append(contentsOf: Array(", \"status\": ".utf8))
            Encode.jsonString(finding.status.rawValue, to: &out)
            out.append(contentsOf: Array(", \"finding\": ".utf8))
            Encode.jsonString(finding.finding, to: &out)
            if let fix = finding.fix {
                out.append(contentsOf: Array(", \"fix\": ".utf8))
                Encode.jsonString(fix, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: Array((findings.isEmpty ? "]\n" : "\n]\n").utf8))
        return out
    }
}
