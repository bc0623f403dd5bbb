from harness.report.html import main

raise SystemExit(main())
