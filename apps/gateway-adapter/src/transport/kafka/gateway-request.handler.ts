import { Injectable } from '@nestjs/common';
import { GatewayRequest, TOPICS } from '@payments/contracts';
import type { ConsumedMessage, KafkaMessageHandler } from '@payments/kafka';
import { GatewayRequestService } from '../../application/gateway-request.service';

/**
 * `payments.gateway.requests.v1` → GatewayRequestService. A transport adapter only: the runner
 * validates the value with the contract schema (invalid → DLQ), commits when `handle` returns and
 * retries when it throws. `accept` returns once the request is handed off (recorded, queued in its
 * endpoint's lane), not when the gateway answered, so a slow endpoint never holds a partition.
 */
@Injectable()
export class GatewayRequestHandler implements KafkaMessageHandler<GatewayRequest> {
  readonly topic = TOPICS.gatewayRequests;
  readonly schema = GatewayRequest;

  constructor(private readonly service: GatewayRequestService) {}

  handle(message: ConsumedMessage<GatewayRequest>): Promise<void> {
    return this.service.accept(message.value, message.headers);
  }
}
