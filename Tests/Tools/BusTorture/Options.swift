import Foundation

/// The command line of `coffer-torture`.
struct Options {
    var kills = 30
    var seed = UInt64.random(in: 0 ... .max)
    /// Writers running at once, each on its own connection and its own items.
    var writers = 2
    /// Each kill comes a random time between 0 and this many milliseconds after the writers start.
    var maxDelayMilliseconds = 250
    /// The data directory; nil: a fresh temporary one, removed after a run without losses.
    var dataDirectory: String?
    /// The cofferd to torture; nil: the one built beside this tool.
    var cofferd: String?

    static let usage = """
        usage: coffer-torture [--kills N] [--seed N] [--writers N] [--max-delay-ms N]
                              [--data-dir DIR] [--cofferd PATH]

        Starts cofferd (--unlock) on a private dbus-daemon and lets writers create (new and
        replace=true), change and delete items over D-Bus while cofferd is SIGKILLed at random
        moments, N times. After each kill cofferd restarts on the same data and every
        acknowledged write must be there exactly, every acknowledged delete gone, and an
        operation in flight at the kill applied fully or not at all.

        Prints `kills: K, operations: O, acknowledged: A, lost: L` last; exit status 0 when
        nothing was lost or broken, 1 when something was, 2 for bad usage, 3 when it could not run.
        """

    /// Parses `arguments` (without the program name); nil on bad usage.
    init?(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { return nil }
            switch flag {
            case "--kills": guard let n = Int(value), n >= 1 else { return nil }; kills = n
            case "--seed": guard let n = UInt64(value) else { return nil }; seed = n
            case "--writers": guard let n = Int(value), (1...16).contains(n) else { return nil }; writers = n
            case "--max-delay-ms": guard let n = Int(value), n >= 0 else { return nil }; maxDelayMilliseconds = n
            case "--data-dir": dataDirectory = value
            case "--cofferd": cofferd = value
            default: return nil
            }
        }
    }
}
