//! The real client address behind trusted reverse proxies.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;
use std::net::{IpAddr, SocketAddr};

/// The address of the client that made the request, as established by [`client_addr`]: the
/// peer address, or, when the peer is a trusted proxy, the nearest untrusted address it
/// reported in `X-Forwarded-For`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// Work out the real client address behind reverse proxies such as nginx, and store it on the
/// request as [`ClientAddr`].
///
/// `X-Forwarded-For` is only believed when the connection comes from one of `trusted_proxies`;
/// its entries are read from the right (the nearest hop) and the first that is not itself a
/// trusted proxy is the client. Anything a client writes into the header before reaching the
/// first trusted proxy is therefore ignored, so it cannot spoof its address.
///
/// ```
/// use std::net::IpAddr;
/// use vireo::middleware::{client_addr, ClientAddr};
/// let mut app = vireo::App::new();
/// let nginx: IpAddr = "127.0.0.1".parse().unwrap();
/// app.r#use(client_addr([nginx]));
/// app.get("/ip", |req: vireo::Request| {
///     req.get::<ClientAddr>().map(|c| c.0.to_string()).unwrap_or_default()
/// });
/// ```
pub fn client_addr(trusted_proxies: impl IntoIterator<Item = IpAddr>) -> ClientAddrLayer {
    ClientAddrLayer {
        trusted: trusted_proxies.into_iter().collect(),
    }
}

/// See [`client_addr`].
#[derive(Debug, Clone)]
pub struct ClientAddrLayer {
    trusted: Vec<IpAddr>,
}

impl ClientAddrLayer {
    /// The client address for a connection from `peer` carrying `forwarded_for`.
    fn resolve(&self, peer: IpAddr, forwarded_for: Option<&str>) -> IpAddr {
        if !self.trusted.contains(&peer) {
            return peer;
        }
        let hops = forwarded_for.unwrap_or("").rsplit(',').map(str::trim);
        let mut client = peer;
        for hop in hops {
            let Some(addr) = parse_hop(hop) else {
                // Garbage from here on was written by the client itself: stop believing it.
                break;
            };
            client = addr;
            if !self.trusted.contains(&addr) {
                break;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: an address, with or without a port.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

impl Middleware for ClientAddrLayer {
    fn call(&self, mut req: Request, next: Next) -> Reply {
        if let Some(peer) = req.remote_addr() {
            // Every line of the field, as one list (RFC 9110 §5.3): a proxy that adds its own
            // line after the client's must not leave the client's forged one first.
            let lines: Vec<&str> = req
                .header_values("x-forwarded-for")
                .filter_map(|v| std::str::from_utf8(v).ok())
                .collect();
            let joined = (!lines.is_empty()).then(|| lines.join(","));
            let client = self.resolve(peer.ip(), joined.as_deref());
            req.set(ClientAddr(client));
        }
        next.run(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_trusted_proxies_are_believed_and_only_up_to_the_first_untrusted_hop() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let edge: IpAddr = "10.0.0.2".parse().unwrap();
        let layer = client_addr([proxy, edge]);
        let client: IpAddr = "203.0.113.7".parse().unwrap();
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(
            layer.resolve(stranger, Some("1.2.3.4")),
            stranger,
            "untrusted peer"
        );
        assert_eq!(layer.resolve(proxy, Some("203.0.113.7")), client);
        assert_eq!(
            layer.resolve(proxy, Some("6.6.6.6, 203.0.113.7, 10.0.0.2")),
            client,
            "spoofed left part ignored"
        );
        assert_eq!(
            layer.resolve(proxy, Some("[2001:db8::1]:4711")),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            layer.resolve(proxy, Some("garbage")),
            proxy,
            "nothing usable: the proxy itself"
        );
        assert_eq!(layer.resolve(proxy, None), proxy);
    }
}
