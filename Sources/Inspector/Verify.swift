import ArgumentParser

struct Verify: ParsableCommand {
    @OptionGroup var file: FileArgument
    func run() throws { _ = try file.open() }
}
