import Foundation
import PeerConnectivityCore

@testable import PeerConnectivity

/// The mesh in the simulation: each side's ``MeshStateMachine``, reacted to as `SessionCore+Mesh.swift`
/// does. SESSION-LISTENER makes the receiver introduce the newcomer (MEMBERS both ways); an introduction
/// makes the lower peer id dial the other's listener, a step of its own taken in an order drawn from
/// the seed; an invitation to a listener before its introduction is held until the introduction comes
/// or, once nothing else can happen, declined (the grace period).
extension SessionSimulation {
    /// The port of `side`'s session listener.
    static func listenerPort(of side: Int) -> Int { 7000 + side }

    /// `side`'s address, as the others see it.
    static func address(of side: Int) -> [UInt8] { [10, 0, 0, UInt8(side + 1)] }

    /// Mesh members' dials to listeners made so far.
    var meshDials: Int { connections.filter(\.toListener).count }

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
                let step = Step.meshDial(from: side, to: peer, introducer: ObjectIdentifier(connection))
                inFlight.append(("dial-\(side)-\(peer)-\(nextNumber)-\(inFlight.count)", [step]))
            case .deferred:
                deferredDials += 1
            case .none:
                break
            }
        }
    }

    /// `side` dials `peer`'s listener, as `invite(expectedPeer:)` does.
    mutating func meshDial(from side: Int, to peer: Int, introducer: ObjectIdentifier) {
        let id = peers[peer]
        do {
            try record(side) { table throws(SessionError) in try table.reserve(id) }
        } catch {
            meshes![side].dialEnded(introducedBy: introducer)
            return
        }
        let connection = SimulatedConnection(number: nextNumber, inviter: side, invitee: peer)
        nextNumber += 1
        connection.toListener = true
        connection.introducer = introducer
        // The listener hands the connection to the invitee's session at once.
        connection.ownedBy = [side, peer]
        connections.append(connection)
        send(.invite, on: connection, from: side)
        inFlight.append(("attach-\(connection.number)", [.attach(connection, at: side, to: peer)]))
    }

    /// The dialler's end of a mesh dial: established or closed, the introducer's count goes down.
    mutating func meshDialEnded(_ connection: SimulatedConnection, at side: Int) {
        guard side == connection.inviter, let introducer = connection.introducer else { return }
        connection.introducer = nil
        meshes?[side].dialEnded(introducedBy: introducer)
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
