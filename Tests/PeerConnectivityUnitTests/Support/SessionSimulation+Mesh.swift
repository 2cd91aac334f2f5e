import Foundation
import PeerConnectivityCore

@testable import PeerConnectivity

/// The mesh in the simulation: each side's ``MeshStateMachine``, reacted to as `SessionRuntime+Mesh.swift`
/// does. SESSION-LISTENER makes the receiver introduce the newcomer (MEMBERS both ways); an introduction
/// makes the lower peer id dial the other's listener, a step of its own taken in an order drawn from
/// the seed; an invitation to a listener before its introduction is held until the introduction comes
/// or, once nothing else can happen, declined (the grace period).
extension SessionSimulation {
    /// The port of `side`'s session listener.
    static func listenerPort(of side: Int) -> Int { 7000 + side }

    /// `side`'s address, as the others see it.
    static func address(of side: Int) -> [UInt8] { [10, 0, 0, UInt8(side + 1)] }

    /// SESSION-LISTENER from `peer` arrived at `side`: introduce it to the others and them to it.
    mutating func meshLearned(_ peer: Int, over connection: SimulatedConnection, at side: Int) {
        guard meshes != nil, tables[side].connectedConnection(to: peers[peer]) === connection else { return }
        let member = PeerConnectivityCore.Frame.Member(
            peer: peers[peer],
            address: Self.address(of: peer),
            port: UInt16(Self.listenerPort(of: peer))
        )
        let table = tables[side]
        let introductions = meshes![side].learned(member, over: connection) {
            table.connectedConnection(to: $0) != nil
        }
        if !introductions.toNewcomer.isEmpty {
            send(.members(introductions.toNewcomer), on: connection, from: side)
        }
        for other in introductions.newcomerTo {
            if let otherConnection = tables[side].connectedConnection(to: other) {
                send(.members([member]), on: otherConnection, from: side)
            }
        }
    }

    /// MEMBERS from `sender` arrived at `side`.
    mutating func meshIntroduced(
        _ members: [PeerConnectivityCore.Frame.Member],
        by sender: Int,
        over connection: SimulatedConnection,
        at side: Int
    ) {
        guard meshes != nil else { return }
        for member in members where member.peer != peers[sender] {
            guard let peer = peers.firstIndex(of: member.peer) else {
                trace.append("  !! introduced an unknown peer \(member.peer)")
                continue
            }
            if member.address != Self.address(of: peer) || Int(member.port) != Self.listenerPort(of: peer) {
                trace.append("  !! \(peer) introduced at the wrong address")
                misdirected += 1
            }
            let isHeld = tables[side][member.peer] != nil
            switch meshes![side].introduced(member, by: connection, isHeld: isHeld) {
            case .accept(let knocking):
                held.removeAll { $0.connection === knocking }
                acceptedOnceIntroduced += 1
                inFlight.append(("accept-\(knocking.number)", [.acceptMember(knocking, at: side, from: peer)]))
            case .dial:
                queueMeshDial(from: side, to: peer)
            case .deferred:
                deferredDials += 1
            case .none:
                break
            }
        }
    }

    /// Queues `side`'s dial to `peer`'s listener, taken in an order drawn from the seed.
    mutating func queueMeshDial(from side: Int, to peer: Int) {
        inFlight.append(("dial-\(side)-\(peer)-\(nextNumber)-\(inFlight.count)", [.meshDial(from: side, to: peer)]))
    }

    /// `side` dials `peer`'s listener, as `invite(expectedPeer:)` does.
    mutating func meshDial(from side: Int, to peer: Int) {
        let id = peers[peer]
        // The mesh's dials hold no place before the member answers (`reservingFirst: false`).
        guard tables[side][id] == nil else {
            _ = meshes![side].dialEnded(id, .held)
            return
        }
        let connection = SimulatedConnection(number: nextNumber, inviter: side, invitee: peer)
        nextNumber += 1
        connection.toListener = true
        connection.reportsMeshDial = true
        // The listener hands the connection to the invitee's session at once.
        connection.ownedBy = [side, peer]
        connections.append(connection)
        send(.invite, on: connection, from: side)
    }

    /// The dialler's end of a mesh dial: established, or closed (then perhaps tried again).
    mutating func meshDialEnded(
        _ connection: SimulatedConnection,
        at side: Int,
        _ outcome: MeshStateMachine<SimulatedConnection>.DialOutcome
    ) {
        guard side == connection.inviter, connection.reportsMeshDial else { return }
        connection.reportsMeshDial = false
        if let retry = meshes?[side].dialEnded(peers[connection.invitee], outcome) {
            meshRetries.append((side, retry))
        }
    }

    /// Every retry timer fires.
    mutating func fireMeshRetries() {
        let due = meshRetries
        meshRetries = []
        for (side, retry) in due {
            let isHeld = tables[side][retry.peer] != nil
            guard meshes![side].retryDue(retry.peer, generation: retry.generation, isHeld: isHeld) != nil,
                let peer = peers.firstIndex(of: retry.peer)
            else { continue }
            queueMeshDial(from: side, to: peer)
        }
    }

    /// `side` no longer holds `peer`: the mesh may dial it again.
    mutating func meshPeerLost(_ peer: Int, at side: Int, reason: DisconnectReason) {
        guard meshes?[side].peerLost(peers[peer], reason: reason) != nil else { return }
        redials += 1
        queueMeshDial(from: side, to: peer)
    }

    /// Once every side holds every other connected, a random open link the mesh made.
    mutating func meshLinkToCut() -> SimulatedConnection? {
        let count = peers.count
        guard
            (0..<count).allSatisfy({ side in
                (0..<count).allSatisfy { $0 == side || tables[side].connectedConnection(to: peers[$0]) != nil }
            })
        else { return nil }
        let links = connections.filter { $0.toListener && !$0.closed.values.contains(true) }
        guard !links.isEmpty else { return nil }
        return links[Int(randomNumber() % UInt64(links.count))]
    }

    /// An invitation to `side`'s listener from `peer`.
    mutating func meshInvitation(on connection: SimulatedConnection, at side: Int, from peer: Int) {
        switch meshes![side].invitation(from: peers[peer], on: connection) {
        case .accept:
            inFlight.append(("accept-\(connection.number)", [.acceptMember(connection, at: side, from: peer)]))
        case .hold(let replaced):
            if let replaced { decline(replaced, at: side, .declined) }
            held.append((side, peer, connection))
        }
    }

    /// The grace period of every invitation still held runs out.
    mutating func expireHolds() {
        let expired = held
        held = []
        for (side, inviter, connection) in expired
        where meshes![side].holdExpired(peers[inviter], connection: connection) {
            refusedAtListener += 1
            decline(connection, at: side, .declined)
        }
    }
}
