import { readFileSync } from 'node:fs';
import { Controller, Get, Header } from '@nestjs/common';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets';

// Read once at boot: the library as published (htmx.org, pinned in package.json).
const HTMX = readFileSync(require.resolve('htmx.org/dist/htmx.min.js'), 'utf8');

/** The console's scripts and style sheet, from its own origin (the only one its CSP allows). */
@Controller('assets')
export class AssetsController {
  @Get('htmx.min.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  htmx(): string {
    return HTMX;
  }

  @Get('console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  script(): string {
    return CONSOLE_SCRIPT;
  }

  @Get('console.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  style(): string {
    return CONSOLE_STYLE;
  }
}
