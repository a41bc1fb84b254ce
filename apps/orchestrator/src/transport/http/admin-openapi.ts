import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AdminActionService } from '../../application/admin/admin-action.service';
import { ORCHESTRATOR_CONFIG } from '../../config';
import { AdminQueryService } from '../../application/queries/admin-query.service';
import { LiveFeed } from '../../application/live/live-feed.service';
import { AdminController } from './admin.controller';
import { AdminTokensController } from './admin-tokens.controller';
import { AdminTokenService } from '../../application/admin/admin-token.service';
import { SagaActions } from '../../application/admin/saga-actions';
import { Clock } from '../../runtime/clock';
import { DeadLettersController } from './dead-letters.controller';
import { DeadLetterService } from '../../application/dead-letters/dead-letter.service';
import { LiveController } from './live.controller';
import { ReconciliationRunsController } from './reconciliation-runs.controller';
import { ReconciliationRunsQuery } from '../../application/queries/reconciliation-runs.query';
import { CaseService } from '../../application/cases/case.service';
import { CasesController } from './cases.controller';
import { DayCloseController } from './day-close.controller';
import { DayCloseService } from '../../application/finance/day-close.service';
import { DayTieOutService } from '../../application/finance/day-tie-out.service';

/**
 * Only what @nestjs/swagger reads: the controller's routes and decorators. The providers are
 * never called while the document is built (no request is served), so empty objects stand in.
 */
@Module({
  controllers: [
    AdminController,
    AdminTokensController,
    LiveController,
    ReconciliationRunsController,
    DeadLettersController,
    CasesController,
    DayCloseController,
  ],
  providers: [
    { provide: CaseService, useValue: {} },
    { provide: ReconciliationRunsQuery, useValue: {} },
    { provide: LiveFeed, useValue: {} },
    { provide: AdminQueryService, useValue: {} },
    { provide: AdminActionService, useValue: {} },
    { provide: AdminTokenService, useValue: {} },
    { provide: SagaActions, useValue: {} },
    { provide: Clock, useValue: {} },
    { provide: DeadLetterService, useValue: {} },
    { provide: DayCloseService, useValue: {} },
    { provide: DayTieOutService, useValue: {} },
    { provide: ORCHESTRATOR_CONFIG, useValue: { admin: { tokens: [] } } },
  ],
})
class AdminDocumentModule {}

/** The admin API's OpenAPI document, generated from the controller (docs/openapi/admin.json). */
export async function buildAdminOpenApiDocument(): Promise<OpenAPIObject> {
  const app = await NestFactory.create(AdminDocumentModule, { logger: false });
  try {
    const config = new DocumentBuilder()
      .setTitle('payments orchestrator — admin API')
      .setDescription(
        'Search sagas, read one with its history, events, gateway requests and audit, and act on it; decide cases (a money decision needs two people: an operator proposes with a reason, another person with the approver role approves; the saga settles with settled-by-decision); list the dead letters and replay one (audited in dead_letter_replays); close a merchant’s day (day-closed control totals; the close report that ties it out against the gateway, versioned) and read the closes and reports. Bearer tokens from ADMIN_TOKENS or created through /admin/tokens (roles viewer, operator, approver; each with a scope: every merchant or a list of endpoints, and every read and action is limited to it: another merchant’s saga answers 404). Every action is an ordinary command on payments.commands.v1, audited on payments.admin.audit.v1 in the same transaction; every step of a case (opened, evidence added, proposed, approved, proposal rejected, closed, reopened; automatic ones by `system`) is audited the same way (admin_audit, case-step-audited).',
      )
      .setVersion('1')
      .addBearerAuth()
      .build();
    const document = SwaggerModule.createDocument(app, config);
    // Parameters in a fixed order: decorators are applied in an order that differs between
    // compilers (tsx/esbuild for the generator, swc under Jest).
    for (const path of Object.values(document.paths)) {
      for (const operation of [path.get, path.post, path.put, path.patch, path.delete]) {
        operation?.parameters?.sort((a, b) =>
          JSON.stringify(['in' in a ? a.in : '', 'name' in a ? a.name : '']).localeCompare(
            JSON.stringify(['in' in b ? b.in : '', 'name' in b ? b.name : '']),
          ),
        );
      }
    }
    return document;
  } finally {
    await app.close();
  }
}
