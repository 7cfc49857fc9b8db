// The headless CLI (protocol.md §2): request lines on stdin, one JSON
// response line per request on stdout, diagnostics on stderr.

import HackMatrixProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    usage: hackmatrix [--headless-cli] [--info] [--debug]
           hackmatrix --bench N
           hackmatrix --help
      --headless-cli  accepted and ignored (the original env passes it)
      --info          log start and end of the session on stderr
      --debug         log every line's size on stderr too
      --bench N       print the in-process steps/s of a random valid policy over N steps, then exit
    Without --bench: reads JSON request lines on stdin, writes one JSON response line each on stdout.
    """

enum LogLevel: Int, Comparable {
    case quiet, info, debug
    static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// A command line the CLI cannot run; reported with the usage text.
struct UsageError: Error {
    let message: String
}

struct Options {
    var logLevel = LogLevel.quiet
    var benchSteps: Int? = nil
    var helpRequested = false

    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "--headless-cli": break  // the original env passes it; nothing to do
            case "--info": logLevel = max(logLevel, .info)
            case "--debug": logLevel = .debug
            case "--help", "-h": helpRequested = true
            case "--bench":
                guard let text = rest.popFirst(), let n = Int(text), n > 0 else {
                    throw UsageError(message: "--bench needs a positive step count")
                }
                benchSteps = n
            default: throw UsageError(message: "unknown argument \(arg)")
            }
        }
    }
}

func serve(_ options: Options) -> Int32 {
    // A closed stdout must end the process with an error status, not a signal
    // we cannot report; with SIGPIPE ignored, write(2) fails with EPIPE instead.
    signal(SIGPIPE, SIG_IGN)
    var session = Session()
    var reader = LineReader()
    var out = JSONWriter(capacity: 1 << 16)
    var writeFailed = false
    if options.logLevel >= .info { logLine("ready (protocol \(ProtocolInfo.protocolVersion))") }
    while !writeFailed
        && reader.nextLine({ line in
            out.removeAll()
            session.handle(line: line, into: &out)
            if options.logLevel >= .debug {
                logLine("line \(session.lineNumber): \(line.count) bytes in, \(out.count) bytes out")
            }
            out.raw("\n")
            writeFailed = !out.withBytes { writeAll(1, $0) }
        })
    {}
    if writeFailed {
        logLine("stdout is closed; exiting")
        return 1
    }
    if options.logLevel >= .info { logLine("end of input after \(session.lineNumber) lines") }
    return 0
}

let options: Options
do {
    options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    logLine("\(error.message)\n\(usage)")
    exit(2)
}
if options.helpRequested {
    var text = usage + "\n"
    _ = text.withUTF8 { writeAll(1, $0) }
    exit(0)
}
if let steps = options.benchSteps {
    runBench(steps: steps)
    exit(0)
}
exit(serve(options))
