import Foundation

/// What a fuzz executable does when built without the fuzzer (no `FUZZING` condition):
///
///     <target> --write-seeds DIR   writes the seed corpus into DIR (made by the real code)
///     <target> PATH…               runs every file (or every file in a folder) through the harness
///
/// The second form reproduces a crash the fuzzer found without sanitizers, under a debugger.
public enum FuzzReplayer {
    public static func main(_ target: FuzzTarget, arguments: [String] = Array(CommandLine.arguments.dropFirst())) throws {
        if arguments.first == "--write-seeds", arguments.count == 2 {
            try writeSeeds(of: target, to: arguments[1])
            return
        }
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            FileHandle.standardError.write(Data("usage: \(target.name) --write-seeds DIR | \(target.name) PATH…\n".utf8))
            exit(2)
        }
        for file in try arguments.flatMap(inputFiles) {
            print(file)
            target.run(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        }
    }

    /// `path` itself, or the files in it (sorted) if it is a folder.
    public static func inputFiles(_ path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
        return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { "\(path)/\($0)" }
    }

    private static func writeSeeds(of target: FuzzTarget, to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for seed in try target.seeds() {
            try Data(seed.bytes).write(to: URL(fileURLWithPath: "\(directory)/\(seed.name)"))
        }
    }
}
