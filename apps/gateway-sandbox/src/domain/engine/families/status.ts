import { Refusal, opt } from '../../fields';
import { EngineRequest, Reply } from '../model';
import { OrderStore } from '../order-store';
import { statusReply } from '../replies';
import { registrationAsked, registrationStatus } from './card-refs-recurring';

/** The status query: by orderid, or client_orderid alone; one request of the order by serial. */
export function status(s: OrderStore, r: EngineRequest): Reply {
  const plan = registrationAsked(s, r);
  if (plan !== undefined) return registrationStatus(s, plan, r.endpointRef);
  const order = s.referenced(r, true);
  const sn = opt(r.fields, 'by-request-sn');
  const op = sn === undefined ? s.last(order) : order.ops.find((o) => o.serial === sn);
  if (!op) throw new Refusal(`no request with serial number ${sn ?? ''} on this order`);
  return statusReply(order, op, s.serial(), op === s.last(order));
}
