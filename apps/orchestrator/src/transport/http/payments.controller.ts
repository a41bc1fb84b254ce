import { Controller, Get, NotFoundException, Param, ParseUUIDPipe } from '@nestjs/common';
import {
  PaymentQueryService,
  type PaymentView,
} from '../../application/queries/payment-query.service';

/** Read API for operators and e2e tests: a payment, its amounts and its history. */
@Controller('payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentQueryService) {}

  @Get(':id')
  async get(@Param('id', new ParseUUIDPipe()) id: string): Promise<PaymentView> {
    return orNotFound(await this.payments.find(id), id);
  }
}

function orNotFound(view: PaymentView | undefined, id: string): PaymentView {
  if (view === undefined) {
    throw new NotFoundException({ code: 'PAYMENT_NOT_FOUND', message: `no payment ${id}` });
  }
  return view;
}
