import ArgumentParser
import LMDBRealm

/// `verify`: every record, index entry, link and backlink checked.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every record, index entry, link and backlink; exit 1 if anything is wrong.",
        discussion: """
            Prints one line per problem (its kind, class, object and what is wrong), then a \
            summary. A damaged file is reported, never crashed on.
            """)

    @OptionGroup var file: FileArgument

    func run() throws {
        let realm = try file.open()
        var progress: ProgressBar?
        let report = try realm.verify { checked, total in
            if progress == nil { progress = ProgressBar(total: total, unit: "objects") }
            let done = progress?.done ?? 0
            progress?.advance(by: checked - done)
        }
        progress?.finish()
        var out = Output()
        for finding in report.findings { out.line(finding.description) }
        let noun = report.findings.count == 1 ? "problem" : "problems"
        out.line(
            report.isSound
                ? "\(file.path): sound (\(report.objectsChecked.grouped) objects checked)."
                : "\(file.path): \(report.findings.count.grouped) \(noun) (\(report.objectsChecked.grouped) objects checked).")
        out.flush()
        if !report.isSound { throw ExitCode(1) }
    }
}
