import {
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CASE_DECISIONS, CaseProposeBody, CaseRejectBody } from '@payments/contracts';
import { z } from 'zod';
import { type CaseResult, CaseService } from '../../application/cases/case.service';
import { CASE_CONCERNS, type CaseProposal, type CaseRecord } from '../../domain/cases/case';
import { AdminAuthGuard, type AdminRequest, principalOf, RequiresRole } from './admin-auth.guard';
import { errorSchema, parsed } from './admin.controller';

const money = {
  type: 'object',
  properties: { minor: { type: 'integer' }, currency: { type: 'string' } },
};

const caseSchema = {
  type: 'object',
  properties: {
    caseId: { type: 'string', format: 'uuid' },
    flow: { type: 'string' },
    sagaId: { type: 'string', format: 'uuid' },
    endpointId: { type: 'string' },
    requestId: { type: 'string', format: 'uuid' },
    operation: { type: 'string' },
    concern: { type: 'string', enum: [...CASE_CONCERNS] },
    status: { type: 'string', enum: ['open', 'proposed', 'closed', 'reopened'] },
    requestedAmount: money,
    reportedAmount: money,
    evidence: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          at: { type: 'string', format: 'date-time' },
          source: { type: 'string' },
          ref: { type: 'string' },
          summary: { type: 'string' },
          reportedAmount: money,
        },
      },
    },
    proposal: { type: 'object', nullable: true },
    decided: { type: 'object', nullable: true },
    audit: { type: 'array', items: { type: 'object' } },
    openedAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const CaseStatusQuery = z.enum(['open', 'proposed', 'closed', 'reopened']).optional();

const CONFLICTS =
  'CASE_SAME_PERSON: the person who proposed cannot approve (four eyes); CASE_APPROVER_ROLE_REQUIRED: approving (or rejecting another’s proposal) needs the approver role; CASE_OPERATOR_ROLE_REQUIRED; CASE_PROPOSAL_PENDING: one proposal at a time; CASE_NO_PROPOSAL; CASE_CLOSED; CASE_REOPENED: the gateway contradicted the decision; CASE_REASON_REQUIRED; CASE_OPERATION_SETTLED: the saga settled the operation meanwhile (by the gateway’s answer), or its outcome is not unknown; CASE_DECISION_INVALID: a decision the operation does not take (a PAN-eligibility check or a create-card-ref: "not done" only); CASE_FLOW_NOT_SETTLEABLE: the operation is not settled by a decision (a gateway-charged schedule’s registration: its case holds the evidence, "refresh and wait" asks again; its charges are decided)';

/**
 * Cases (issue 33): the operations a person must decide, in the token's scope (another
 * merchant's case is not found). A money decision needs two people: an operator proposes with a
 * reason, a different person with the approver role approves; the saga then settles with its
 * `settled-by-decision` event (never an ordinary success), and nothing is sent to the gateway.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({
  description: 'no, unknown or revoked bearer token',
  schema: errorSchema,
})
@UseGuards(AdminAuthGuard)
@Controller('admin/cases')
export class CasesController {
  constructor(private readonly cases: CaseService) {}

  @Get()
  @ApiOperation({ summary: 'Cases in the token’s scope, newest first' })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: ['open', 'proposed', 'closed', 'reopened'],
  })
  @ApiOkResponse({ schema: { type: 'array', items: caseSchema } })
  async list(
    @Query('status') status: string | undefined,
    @Req() request: AdminRequest,
  ): Promise<CaseRecord[]> {
    // `parsed` reads an absent value as `{}`: no filter is no filter.
    const filter = status === undefined ? undefined : parsed(CaseStatusQuery, status);
    return this.cases.list(principalOf(request), filter);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One case: its concern, evidence, proposal, decision and audit' })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiOkResponse({ schema: caseSchema })
  @ApiNotFoundResponse({ description: "no such case in the token's scope", schema: errorSchema })
  async show(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Req() request: AdminRequest,
  ): Promise<CaseRecord> {
    const record = await this.cases.get(principalOf(request), id);
    if (record === undefined)
      throw new NotFoundException({ code: 'CASE_NOT_FOUND', message: `no case ${id}` });
    return record;
  }

  @Post(':id/propose')
  @HttpCode(200)
  @RequiresRole('operator')
  @ApiOperation({
    summary: 'Propose a decision with a reason (operator role)',
    description:
      '"done" at the gateway\'s amount, "not-done", or "refresh-and-wait" (asks the gateway again; the case stays open). A money decision waits for a second person with the approver role.',
  })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['decision', 'reason'],
      properties: {
        decision: { type: 'string', enum: [...CASE_DECISIONS] },
        amount: money,
        amountWhy: { type: 'string' },
        reason: { type: 'string', minLength: 1, maxLength: 1024 },
      },
    },
  })
  @ApiOkResponse({ schema: caseSchema })
  @ApiForbiddenResponse({ description: 'the token is a viewer’s', schema: errorSchema })
  @ApiNotFoundResponse({ description: "no such case in the token's scope", schema: errorSchema })
  @ApiConflictResponse({ description: CONFLICTS, schema: errorSchema })
  async propose(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Body() body: unknown,
    @Req() request: AdminRequest,
  ): Promise<CaseRecord> {
    const { reason, ...decision } = parsed(CaseProposeBody, body);
    const proposal: CaseProposal =
      decision.decision === 'done'
        ? {
            decision: 'done',
            amount: decision.amount,
            ...(decision.amountWhy === undefined ? {} : { amountWhy: decision.amountWhy }),
          }
        : { decision: decision.decision };
    return answer(id, await this.cases.propose(principalOf(request), id, proposal, reason));
  }

  @Post(':id/approve')
  @HttpCode(200)
  @RequiresRole('approver')
  @ApiOperation({
    summary: 'Approve the pending proposal (approver role, another person): the saga settles',
  })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiOkResponse({ schema: caseSchema })
  @ApiForbiddenResponse({ description: 'the token is not an approver’s', schema: errorSchema })
  @ApiNotFoundResponse({ description: "no such case in the token's scope", schema: errorSchema })
  @ApiConflictResponse({ description: CONFLICTS, schema: errorSchema })
  async approve(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Req() request: AdminRequest,
  ): Promise<CaseRecord> {
    return answer(id, await this.cases.approve(principalOf(request), id));
  }

  @Post(':id/reject-proposal')
  @HttpCode(200)
  @RequiresRole('operator')
  @ApiOperation({
    summary: 'Reject the pending proposal (approver role, or its proposer withdrawing it)',
  })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['reason'],
      properties: { reason: { type: 'string', minLength: 1, maxLength: 1024 } },
    },
  })
  @ApiOkResponse({ schema: caseSchema })
  @ApiNotFoundResponse({ description: "no such case in the token's scope", schema: errorSchema })
  @ApiConflictResponse({ description: CONFLICTS, schema: errorSchema })
  async rejectProposal(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Body() body: unknown,
    @Req() request: AdminRequest,
  ): Promise<CaseRecord> {
    const { reason } = parsed(CaseRejectBody, body);
    return answer(id, await this.cases.rejectProposal(principalOf(request), id, reason));
  }
}

function answer(id: string, result: CaseResult): CaseRecord {
  switch (result.kind) {
    case 'ok':
      return result.record;
    case 'not-found':
      throw new NotFoundException({ code: 'CASE_NOT_FOUND', message: `no case ${id}` });
    case 'refused':
      throw new ConflictException({ code: result.code, message: result.message });
    default: {
      const never: never = result;
      throw new Error(`unhandled result ${JSON.stringify(never)}`);
    }
  }
}
