// The headless CLI (protocol.md §2): request lines on stdin, one JSON
// response line per request on stdout, diagnostics on stderr.
//
//   hackmatrix [--headless-cli] [--info] [--debug]
//   hackmatrix --bench N        in-process steps/s of a random valid policy

import HackMatrixProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum LogLevel: Int, Comparable {
    case quiet, info, debug
    static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

struct Options {
    var logLevel = LogLevel.quiet
    var benchSteps: Int? = nil

    init(arguments: [String]) {
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "--headless-cli": break  // the original env passes it; nothing to do
            case "--info": logLevel = max(logLevel, .info)
            case "--debug": logLevel = .debug
            case "--bench":
                if let text = rest.popFirst(), let n = Int(text), n > 0 {
                    benchSteps = n
                } else {
                    logLine("--bench needs a positive step count; ignored")
                }
            default: logLine("ignoring unknown argument \(arg)")
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

let options = Options(arguments: Array(CommandLine.arguments.dropFirst()))
if let steps = options.benchSteps {
    runBench(steps: steps)
    exit(0)
}
exit(serve(options))
