// The enemy phase (game-rules.md §8), run after a turn-ending action.

extension GameState {
    mutating func runEnemyPhase() {
        if stepActive {  // §8.1: STEP skips the whole phase
            stepActive = false
            return
        }
        turn += 1
        hatchTransmissions()
        enemiesAct()
        runScheduledTask()
        spawnPendingSiphonTransmissions()
        for i in enemies.indices {  // §8.8 housekeeping
            enemies[i].disabled = max(0, enemies[i].disabled - 1)
            enemies[i].stunned = false
        }
        pushSnapshot()
    }

    /// §8.3: transmissions at countdown 1 become (disabled) enemies; the others count down.
    private mutating func hatchTransmissions() {
        var kept: [Transmission] = []
        for t in transmissions {
            if t.countdown <= 1 {
                enemies.append(Enemy(
                    type: t.enemyType, position: t.position, disabled: 1, fromSiphon: t.fromSiphon,
                    fromScheduled: t.fromScheduled))
            } else {
                var waiting = t
                waiting.countdown -= 1
                kept.append(waiting)
            }
        }
        transmissions = kept
    }

    /// §8.4: two sub-steps in keyed order; adjacent enemies attack, the others move.
    private mutating func enemiesAct() {
        let random = self.random
        var attacked = [Bool](repeating: false, count: enemies.count)
        for (subStep, site) in [(0, Site.enemyOrderA), (1, Site.enemyOrderB)] {
            for i in random.keyedOrder(site, Array(enemies.indices)) {
                let enemy = enemies[i]
                if enemy.disabled > 0 || enemy.stunned || attacked[i] { continue }
                if subStep == 1 && enemy.type != .virus { continue }  // only viruses act twice
                if enemy.position.distance(to: player.position) == 1 {
                    player.hp = max(0, player.hp - 1)
                    attacked[i] = true
                } else {
                    moveEnemy(at: i)
                }
            }
        }
    }

    /// §8.6: one scheduled transmission every `interval` turns, unless CALM is active.
    private mutating func runScheduledTask() {
        guard !tasksDisabled && turn >= nextTaskTurn else { return }
        spawnTransmissions(
            count: 1, cellSite: .scheduledTransmissionCell, typeSite: .scheduledTransmissionType,
            fromSiphon: false, fromScheduled: true)
        nextTaskTurn = turn + interval
    }

    /// §8.7: the transmissions queued by siphons appear; those that find no cell are lost.
    private mutating func spawnPendingSiphonTransmissions() {
        guard pending > 0 else { return }
        spawnTransmissions(
            count: pending, cellSite: .siphonTransmissionCell, typeSite: .siphonTransmissionType,
            fromSiphon: true, fromScheduled: false)
        pending = 0
    }
}
