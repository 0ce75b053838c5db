import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

enum TaskStatus: String, PersistableEnum {
    case open, doing, done
}

enum TaskPriority: Int, PersistableEnum {
    case low = 1, normal = 5, high = 9
}

final class TaskItem: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var status: TaskStatus
    @Persisted var priority: TaskPriority = .normal
    @Persisted var previous: TaskStatus?
    @Persisted var history: List<TaskStatus>
}

@Suite struct PersistableEnumTests {
    /// Enums persist as their raw values, default to their first case, and are queried in the
    /// DSL, in predicate strings (by case or raw value) and through their index.
    @Test func enumsPersistAsRawValuesAndAreQueryable() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [TaskItem.self]))
            #expect(TaskItem().status == .open)
            #expect(realm.schema["TaskItem"]?["status"]?.type == .string)
            try realm.write {
                for (id, status, priority) in [(1, TaskStatus.open, TaskPriority.low), (2, .doing, .high), (3, .done, .high), (4, .doing, .normal)] {
                    let task = TaskItem()
                    task.id = id
                    task.status = status
                    task.priority = priority
                    task.previous = id == 3 ? .doing : nil
                    task.history.append(objectsIn: [.open, status])
                    realm.add(task)
                }
            }
            let tasks = realm.objects(TaskItem.self)
            #expect(tasks.where { $0.status == .doing }.map(\.id).sorted() == [2, 4])
            #expect(tasks.where { $0.priority == .high && $0.status != .done }.map(\.id) == [2])
            #expect(tasks.where { $0.status.in([TaskStatus.open, .done]) }.map(\.id).sorted() == [1, 3])
            #expect(tasks.filter("status == %@", TaskStatus.done).map(\.id) == [3])
            #expect(tasks.filter("status == 'doing' AND priority == %@", 9).map(\.id) == [2])
            #expect(tasks.filter("previous == %@", TaskStatus.doing).map(\.id) == [3])
            #expect(tasks.filter("ANY history == %@", TaskStatus.done).map(\.id) == [3])
            #expect(tasks.where { $0.status == .doing }.explain().contains("index"))
            let task = try #require(realm.object(ofType: TaskItem.self, forPrimaryKey: 3))
            #expect(task.status == .done && task.priority == .high && task.previous == .doing)
            #expect(Array(task.history) == [.open, .done])
            try realm.write { task.status = .open }
            #expect(tasks.where { $0.status == .open }.count == 2)
            #expect(realm.indexProblems() == [])
        }
    }
}
