// The effects of the 23 programs (game-rules.md §7). Costs are paid by the
// step before the effect runs; only WAIT ends the turn.

extension GameState {
    mutating func runProgram(_ program: Program, _ events: inout StepEvents) {
        switch program {
        case .push: resolveMoves(wanted: enemies.map { pushTarget(for: $0) })
        case .pull: resolveMoves(wanted: enemies.map { pullTarget(for: $0) })
        case .crash: crash(&events)
        case .warp: warp(&events)
        case .poly: poly(&events)
        case .wait: break  // ends the turn; the step runs the enemy phase
        case .debug: damageEnemies(enemyIndices { isBlock($0.position) }, by: player.attack, &events)
        case .row:
            let row = player.position.row
            damageEnemies(enemyIndices { $0.position.row == row }, by: player.attack, &events)
        case .col:
            let col = player.position.col
            damageEnemies(enemyIndices { $0.position.col == col }, by: player.attack, &events)
        case .undo: restoreLatestSnapshot()
        case .step: stepActive = true
        case .siphPlus: player.dataSiphons += 1
        case .exch: player.energy += 4
        case .show: showActivated = true
        case .reset: player.hp = Rules.maxHP
        case .calm: tasksDisabled = true
        case .dBom: daemonBomb(&events)
        case .delay:
            for t in transmissions.indices { transmissions[t].countdown += Rules.delayTurns }
        case .antiV: damageEnemies(enemyIndices { $0.type == .virus }, by: 1, &events)
        case .score: player.score += Rules.lastStage - stage
        case .reduc:
            for c in cells.indices where cells[c].content == .block && !cells[c].siphoned {
                if var block = cells[c].block {
                    block.spawnCount = max(0, block.spawnCount - 1)
                    cells[c].block = block
                }
            }
        case .atkPlus:
            player.attack += 1
            atkPlusUses += 1
        case .hack: damageEnemies(enemyIndices { cells[$0.position.index].siphoned }, by: player.attack, &events)
        }
    }

    /// List indices of the enemies that match.
    private func enemyIndices(where matches: (Enemy) -> Bool) -> [Int] {
        enemies.indices.filter { matches(enemies[$0]) }
    }

    /// Damages the given enemies, stuns survivors, then removes the dead.
    private mutating func damageEnemies(_ targets: [Int], by amount: Int, _ events: inout StepEvents) {
        for i in targets { damageEnemy(at: i, by: amount) }
        removeDeadEnemies(&events)
    }

    // MARK: PUSH and PULL (§7.1, §7.2)

    /// The candidate cells one step away from (PUSH) or towards (PULL) the player.
    private func pushPullCandidates(for enemy: Enemy, towards: Bool) -> [Position] {
        let (e, p) = (enemy.position, player.position)
        let sign = towards ? -1 : 1
        let sr = sign * (e.row - p.row).signum()
        let sc = sign * (e.col - p.col).signum()
        var candidates: [Position] = []
        let diagonal = Position(row: e.row + sr, col: e.col + sc)
        if diagonal.inBounds { candidates.append(diagonal) }
        let vertical = Position(row: e.row + sr, col: e.col)
        if sr != 0 && vertical.inBounds { candidates.append(vertical) }
        let horizontal = Position(row: e.row, col: e.col + sc)
        if sc != 0 && horizontal.inBounds { candidates.append(horizontal) }
        return candidates
    }

    /// PUSH: the candidate farthest from the player, the earliest on a tie.
    private func pushTarget(for enemy: Enemy) -> Position? {
        earliestBest(pushPullCandidates(for: enemy, towards: false)) { $0 > $1 }
    }

    /// PULL: the candidate nearest to the player (never the player's cell), the earliest on a tie.
    private func pullTarget(for enemy: Enemy) -> Position? {
        let candidates = pushPullCandidates(for: enemy, towards: true).filter { $0 != player.position }
        return earliestBest(candidates) { $0 < $1 }
    }

    /// The first candidate whose distance to the player no later candidate strictly beats.
    private func earliestBest(_ candidates: [Position], beats: (Int, Int) -> Bool) -> Position? {
        var best: Position?
        for c in candidates {
            if let current = best, !beats(c.distance(to: player.position), current.distance(to: player.position)) {
                continue
            }
            best = c
        }
        return best
    }

    /// Claims in list order, then cancel moves onto transmissions or staying enemies until stable.
    private mutating func resolveMoves(wanted: [Position?]) {
        var moving = [Bool](repeating: false, count: enemies.count)
        var claimed = Set<Position>()
        for (i, want) in wanted.enumerated() {
            if let want, claimed.insert(want).inserted { moving[i] = true }
        }
        var cancelled = true
        while cancelled {
            cancelled = false
            for i in enemies.indices where moving[i] {
                let want = wanted[i]!
                let blockedByStayer = enemies.indices.contains { !moving[$0] && enemies[$0].position == want }
                if transmissionIndex(at: want) != nil || blockedByStayer {
                    moving[i] = false
                    cancelled = true
                }
            }
        }
        for i in enemies.indices where moving[i] { enemies[i].position = wanted[i]! }
    }

    // MARK: CRASH, WARP, POLY, D_BOM

    /// §7.3: clears blocks, enemies and transmissions from the player's ring.
    private mutating func crash(_ events: inout StepEvents) {
        for x in player.position.ring {
            if cells[x.index].content == .block {
                cells[x.index].content = .empty
                cells[x.index].block = nil
            }
            if let e = enemyIndex(at: x) {
                if !enemies.remove(at: e).fromScheduled { events.enemiesKilled += 1 }
            }
            if let t = transmissionIndex(at: x) {
                if !transmissions.remove(at: t).fromScheduled { events.transmissionsKilled += 1 }
            }
        }
    }

    /// §7.4: teleport onto a random enemy or transmission, removing it. No pickups.
    private mutating func warp(_ events: inout StepEvents) {
        let k = random.index(.warpTarget, 0, count: enemies.count + transmissions.count)
        if k < enemies.count {
            let target = enemies.remove(at: k)
            player.position = target.position
            if !target.fromScheduled { events.enemiesKilled += 1 }
        } else {
            let target = transmissions.remove(at: k - enemies.count)
            player.position = target.position
            if !target.fromScheduled { events.transmissionsKilled += 1 }
        }
    }

    /// §7.5: every enemy becomes a random other type, keeping its damage.
    private mutating func poly(_ events: inout StepEvents) {
        let random = self.random
        for i in enemies.indices {
            let damage = enemies[i].type.maxHP - enemies[i].hp
            let others = EnemyType.allCases.filter { $0 != enemies[i].type }
            let newType = others[random.index(.polyType, i, count: 3)]
            enemies[i].type = newType
            enemies[i].hp = max(0, newType.maxHP - damage)
            if newType == .cryptog { enemies[i].lastKnown = enemies[i].position }
        }
        removeDeadEnemies(&events)
    }

    /// §7.17: destroy the nearest daemon; 1 damage to every enemy in its ring.
    private mutating func daemonBomb(_ events: inout StepEvents) {
        var nearest: Int?
        for i in enemies.indices where enemies[i].type == .daemon {
            if nearest == nil || enemies[i].position.distance(to: player.position)
                < enemies[nearest!].position.distance(to: player.position) {
                nearest = i
            }
        }
        let daemon = enemies.remove(at: nearest!)
        if !daemon.fromScheduled { events.enemiesKilled += 1 }
        let blast = Set(daemon.position.ring)
        damageEnemies(enemyIndices { blast.contains($0.position) }, by: 1, &events)
    }
}
