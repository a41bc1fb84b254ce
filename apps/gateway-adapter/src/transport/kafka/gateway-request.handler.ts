import { Injectable } from '@nestjs/common';
import { GatewayRequest, TOPICS } from '@payments/contracts';
import type { ConsumedMessage, KafkaMessageHandler } from '@payments/kafka';
import { GatewayRequestService } from '../../application/gateway-request.service';

/**
 * `payments.gateway.requests.v1` → GatewayRequestService. A transport adapter only: the runner
 * validates the value with the contract schema (invalid → DLQ), commits when `handle` returns and
 * retries when it throws.
 */
@Injectable()
export class GatewayRequestHandler implements KafkaMessageHandler<GatewayRequest> {
  readonly topic = TOPICS.gatewayRequests;
  readonly schema = GatewayRequest;

  constructor(private readonly service: GatewayRequestService) {}

  handle(message: ConsumedMessage<GatewayRequest>): Promise<void> {
    return this.service.execute(message.value, message.headers);
  }
}
