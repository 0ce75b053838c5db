// The reliability battery: `make reliability` runs every part at the size CI runs and prints
// one table; each part also runs alone (`ReliabilityBattery crash --trials 1000`, …).
import ArgumentParser

struct ReliabilityBattery: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Crash trials, fault injection and soak of LMDBRealm files.",
        subcommands: [
            CrashCommand.self, ChildWorkloadCommand.self, ChildMigrateCommand.self, WriteLogbookCommand.self, FaultsCommand.self,
            ChildFaultsCommand.self, ReportCommand.self, LoggedCommand.self, CorruptCommand.self, ChildReadCommand.self, SoakCommand.self,
            SoakChildCommand.self, FullDiskCommand.self, ChildFullDiskCommand.self, PowerCutCommand.self, ChildPowerCheckCommand.self,
        ])
}

ReliabilityBattery.main()
