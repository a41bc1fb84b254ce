import { createHash } from 'node:crypto';

/** The gateway's callback checksum, computed independently of the apps: sha1(status + orderid + merchant_order + key). */
export function controlFor(
  status: string,
  orderid: string,
  merchantOrder: string,
  key: string,
): string {
  return createHash('sha1')
    .update(`${status}${orderid}${merchantOrder}${key}`, 'utf8')
    .digest('hex');
}
