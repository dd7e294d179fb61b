import sys

if sys.argv[1:2] == ["run-agent"]:  # the background agent skips the CLI's libraries
    from localagent.daemon.background import main

    main(sys.argv[2:])
else:
    from localagent.cli import main

    main()
