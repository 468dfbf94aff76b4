/**
 * One client, as every per-address allowance counts it (the anonymous GraphQL limit, the public
 * live feed's streams per address, the dashboard's sign-in throttle): an IPv4 address as it is
 * (IPv4-mapped IPv6 included), an IPv6 address by its /64 prefix, the smallest block one
 * subscriber is usually given: one client could otherwise take a fresh address for every request.
 */
import ipaddr from 'ipaddr.js';

export function clientAddressKey(address: string): string {
  const withoutZone = address.split('%')[0]!;
  if (!ipaddr.IPv6.isValid(withoutZone)) return address;
  const v6 = ipaddr.IPv6.parse(withoutZone);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}
