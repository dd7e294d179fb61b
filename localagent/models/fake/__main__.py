import sys

from localagent.models.fake.command import main

sys.exit(main())
